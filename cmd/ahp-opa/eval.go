package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/service"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// maxEvalInput bounds what eval reads: the same limit as one stdio message.
const maxEvalInput = transport.DefaultMaxMessageBytes

func evalCommand() *cobra.Command {
	var configPath string
	var explain string
	var printInput bool
	cmd := &cobra.Command{
		Use:   "eval [--policy PATH]... FILE|-",
		Short: "Decide one event or intercept request and print the AHP response",
		Long: `Eval reads one tool.before event, or one whole hooks/intercept request, from
FILE (or stdin for -) and prints the JSON-RPC response a harness would get.
An event is wrapped in a request that advertises the deny effect.

With --explain (--explain=rules) it also prints, on stderr, every decision
rule that fired with its file:line, including built-in rules the
configuration disabled. --explain=notes, fails, full or debug prints OPA's
evaluation trace on stderr instead, filtered as opa eval --explain does
(notes: trace() calls; fails: failed expressions; full: every step).
With --print-input it prints only the policy input: the event with the
input.ahp enrichment (tool family, parsed shell command, resolved paths),
ready to paste into a Rego test.

Exit status: 0 for a result (no objection or deny), 1 for an error response.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch explain {
			case "", "rules", "notes", "fails", "full", "debug":
			default:
				return fmt.Errorf("--explain %q: want rules, notes, fails, full or debug", explain)
			}
			cfg, err := config.Load(withoutFlags(cmd.Flags(), "explain", "print-input"), configPath, os.Environ)
			if err != nil {
				return err
			}
			if explain != "" && !cmd.Flags().Changed("log-level") && cfg.LogLevel == config.Default().LogLevel {
				// The explanation is the output: routine INFO lines would
				// only be mixed into it; warnings still show.
				cfg.LogLevel = "warn"
			}
			log, err := newLogger(os.Stderr, cfg.LogLevel, cfg.LogFormat)
			if err != nil {
				return err
			}
			data, err := readInput(args[0])
			if err != nil {
				return err
			}
			if printInput {
				return printPolicyInput(cmd.OutOrStdout(), data)
			}
			msg, err := asRequest(data)
			if err != nil {
				return err
			}
			// The auditor (with no log) masks secrets in reasons, as serve
			// does; a remote bundle is waited for.
			svc, err := service.New(cmd.Context(), cfg, service.Options{Logger: log, WaitRemote: true})
			if err != nil {
				return err
			}
			defer svc.Close()
			eng, srv := svc.Engine(), svc.Server
			resp := srv.Handle(cmd.Context(), msg)
			if resp == nil {
				return fmt.Errorf("%s is a notification: it gets no response", args[0])
			}
			out, err := json.MarshalIndent(resp, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n", out)
			switch explain {
			case "":
			case "rules":
				notice, _ := cfg.PolicyNotice()
				fmt.Fprintln(cmd.ErrOrStderr(), notice)
				if err := explainDecision(cmd.Context(), cmd.ErrOrStderr(), eng, data); err != nil {
					return err
				}
			default:
				if err := traceDecision(cmd.Context(), cmd.ErrOrStderr(), eng, data, explain); err != nil {
					return err
				}
			}
			if resp.Error != nil {
				return exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "YAML configuration `file`")
	cmd.Flags().StringVar(&explain, "explain", "", "on stderr: `mode` rules (the rules that fired, with file:line; --explain alone), or OPA's trace: notes, fails, full or debug")
	cmd.Flags().Lookup("explain").NoOptDefVal = "rules"
	cmd.Flags().BoolVar(&printInput, "print-input", false, "print the enriched policy input instead of deciding")
	addEngineFlags(cmd.Flags())
	return cmd
}

func readInput(name string) ([]byte, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxEvalInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > maxEvalInput {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxEvalInput)
	}
	return data, nil
}

// asRequest returns data unchanged when it is a JSON-RPC message, and wraps
// a bare event in a hooks/intercept request otherwise.
func asRequest(data []byte) ([]byte, error) {
	msg, perr := transport.Decode(data)
	if perr != nil {
		return nil, fmt.Errorf("input: %w", perr)
	}
	if _, ok := msg["jsonrpc"]; ok {
		return data, nil
	}
	id, _ := msg["id"].(string)
	if id == "" {
		id = "eval"
	}
	return json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"method":  ahp.MethodIntercept,
		"params": map[string]any{
			"protocolVersion": ahp.Version,
			"event":           msg,
			"capabilities":    map[string]any{"effects": []string{ahp.EffectDeny}},
		},
	})
}
