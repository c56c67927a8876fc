package enrich

import (
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Remote acts of structured MCP tools: a GitHub server's
// merge_pull_request does what `gh pr merge` does, a Kubernetes server's
// pods_delete what `kubectl delete pod` does. Such a call is given the
// command line of the equivalent CLI (input.ahp.tool.equivalent) and
// analysed as that command, so the rules about the CLI judge the tool
// too. The MCP descriptor stays, so the MCP allowlist still applies.

// fieldsOf reads an MCP tool's arguments by name: the first present of
// names, as text ("" when none).
type fieldsOf func(names ...string) string

// mcpEquivalents maps an MCP tool name (lower-cased) to the command line
// of the CLI that does the same. Tool names are those of the GitHub,
// GitLab and Kubernetes MCP servers in common use.
var mcpEquivalents = map[string]func(f fieldsOf) string{
	// GitHub
	"merge_pull_request": func(f fieldsOf) string {
		return join("gh", "pr", "merge", f("pullNumber", "pull_number", "number"), "--repo", ownerRepo(f))
	},
	"push_files":            pushTo,
	"create_or_update_file": pushTo,
	"delete_file":           pushTo,
	"create_commit":         pushTo,
	"delete_repository": func(f fieldsOf) string {
		return join("gh", "repo", "delete", ownerRepo(f), "--yes")
	},
	"update_repository": func(f fieldsOf) string {
		vis := f("visibility")
		if vis == "" && f("private") == "false" {
			vis = "public"
		}
		return join("gh", "repo", "edit", ownerRepo(f), opt("--visibility", vis))
	},
	"create_release": func(f fieldsOf) string {
		return join("gh", "release", "create", f("tag_name", "tag", "tagName"), "--repo", ownerRepo(f))
	},
	"run_workflow": func(f fieldsOf) string {
		return join("gh", "workflow", "run", f("workflow_id", "workflowId", "workflow"), "--repo", ownerRepo(f), opt("--ref", f("ref")))
	},
	"delete_branch": func(f fieldsOf) string {
		return join("git", "push", "origin", "--delete", f("branch", "ref"))
	},
	// GitLab
	"merge_merge_request": func(f fieldsOf) string {
		return join("glab", "mr", "merge", f("merge_request_iid", "iid"), "--repo", f("project_id", "project"))
	},
	"delete_project": func(f fieldsOf) string {
		return join("glab", "repo", "delete", f("project_id", "project"), "--yes")
	},
	// Kubernetes. The kubectl_* tools of the Kubernetes servers (kubectl_get,
	// kubectl_scale, kubectl_rollout…) are read by their verb in
	// kubectlTool; these are the other spellings.
	"pods_delete": func(f fieldsOf) string {
		return join("kubectl", "delete", "pod", f("name"), kubeOpts(f))
	},
	"resources_delete": func(f fieldsOf) string {
		return join("kubectl", "delete", strings.ToLower(f("kind")), f("name"), kubeOpts(f))
	},
	"namespaces_delete": func(f fieldsOf) string {
		return join("kubectl", "delete", "namespace", f("name", "namespace"), opt("--context", f("context")))
	},
	"resources_create_or_update": kubectlApply,
	"apply_manifest":             kubectlApply,
	"kubectl_apply":              kubectlApply,
	"kubectl_create":             kubectlApply,
	"scale_deployment": func(f fieldsOf) string {
		return join("kubectl", "scale", "deployment", f("name", "deployment"), opt("--replicas", f("replicas")), kubeOpts(f))
	},
	"kubectl_generic": func(f fieldsOf) string {
		return join("kubectl", f("command"), f("subCommand", "sub_command"), f("resourceType", "resource_type"), f("name"), kubeOpts(f))
	},
	"exec_in_pod": podExec,
	"pods_exec":   podExec,
	"pod_exec":    podExec,
	"helm_uninstall": func(f fieldsOf) string {
		return join("helm", "uninstall", f("name", "release"), opt("-n", f("namespace")), opt("--kube-context", f("context", "kubeContext")))
	},
	"uninstall_helm_chart": func(f fieldsOf) string {
		return join("helm", "uninstall", f("name", "release"), opt("-n", f("namespace")), opt("--kube-context", f("context", "kubeContext")))
	},
	"helm_install":       helmInstall,
	"install_helm_chart": helmInstall,
	"upgrade_helm_chart": helmInstall,
}

func pushTo(f fieldsOf) string {
	if f("owner") == "" && f("repo", "repository", "project_id", "projectId", "project", "repo_slug", "workspace") == "" {
		return "" // not a repository's file: a filesystem server's tool of the same name
	}
	branch := f("branch", "ref", "branch_name")
	if branch == "" {
		// The repository's default branch, whose name the call does not
		// say: judged as its usual name.
		branch = "main"
	}
	return join("git", "push", "origin", "HEAD:"+branch)
}

func kubectlApply(f fieldsOf) string {
	return join("kubectl", "apply", kubeOpts(f), "-f", "-")
}

// podExec runs a command in a pod: kubectl exec POD -- COMMAND. The
// command's words are appended by equivalentCommand (argvTools).
func podExec(f fieldsOf) string {
	return join("kubectl", "exec", f("name", "pod", "podName", "pod_name"), opt("-c", f("container")), kubeOpts(f), "--")
}

// kubeOpts are the namespace and context a Kubernetes tool names: the
// context decides whether the cluster is a local one (kind-*, minikube).
func kubeOpts(f fieldsOf) string {
	return join(opt("-n", f("namespace")), opt("--context", f("context", "kubeContext", "kube_context")))
}

// kubectlTool builds the command line of a tool named kubectl_VERB
// (kubectl_get, kubectl_scale, kubectl_rollout): the verb, the resource
// and its name, the namespace, context and replicas; "" for any other
// name. kubectl_context switches the current context, which is no
// command a rule judges by its verb.
func kubectlTool(tool string, f fieldsOf) string {
	verb, ok := strings.CutPrefix(tool, "kubectl_")
	if !ok || verb == "" || verb == "context" {
		return ""
	}
	return join("kubectl", strings.ReplaceAll(verb, "_", " "), f("subCommand", "sub_command", "action"),
		f("resourceType", "resource_type", "kind", "resource"), f("name"),
		opt("--replicas", f("replicas")), opt("-o", f("output", "outputFormat")), kubeOpts(f))
}

func helmInstall(f fieldsOf) string {
	return join("helm", "upgrade", "--install", f("name", "release"), f("chart"), opt("-n", f("namespace")), opt("--kube-context", f("context", "kubeContext")))
}

func ownerRepo(f fieldsOf) string {
	owner, repo := f("owner"), f("repo", "repository")
	if owner == "" {
		return repo
	}
	return owner + "/" + repo
}

// opt is an option and its value, or nothing when the value is empty.
func opt(name, value string) string {
	if value == "" {
		return ""
	}
	return name + " " + quote(value)
}

// join builds a command line of words, quoting each that needs it and
// leaving out empty ones; words built by opt are already quoted.
func join(words ...string) string {
	var b strings.Builder
	for i, w := range words {
		if w == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if i > 0 && !strings.HasPrefix(w, "-") {
			w = quote(w)
		}
		b.WriteString(w)
	}
	return b.String()
}

// quote single-quotes a word that is not plainly safe: a field of the
// tool's arguments must never become shell syntax of its own.
func quote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@=+,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// argvTools are the tools whose command line ends with the words of a
// field: the command run in a pod, the extra arguments of kubectl_generic.
var argvTools = map[string][]string{
	"exec_in_pod": {"command", "cmd"}, "pods_exec": {"command", "cmd"}, "pod_exec": {"command", "cmd"},
	"kubectl_generic": {"args"},
}

// equivalentCommand returns the CLI command line an MCP tool's call
// amounts to, "" when the tool is not one of mcpEquivalents nor a
// kubectl_VERB tool.
func equivalentCommand(tool string, input ast.Object) string {
	f := func(names ...string) string {
		for _, n := range names {
			switch v := field(input, n).(type) {
			case ast.String:
				if v != "" {
					return string(v)
				}
			case ast.Number:
				if i, ok := v.Int(); ok {
					return strconv.Itoa(i)
				}
				return v.String()
			case ast.Boolean:
				return strconv.FormatBool(bool(v))
			}
		}
		return ""
	}
	var line string
	if build, ok := mcpEquivalents[tool]; ok {
		line = build(f)
	} else {
		line = kubectlTool(tool, f)
	}
	if line == "" {
		return ""
	}
	for _, k := range argvTools[tool] {
		switch v := field(input, k).(type) {
		case ast.String:
			// A command line of its own, run as the server runs it.
			return line + " " + string(v)
		case *ast.Array:
			words := make([]string, 0, v.Len())
			for i := range v.Len() {
				if s, ok := asText(v.Elem(i).Value); ok {
					words = append(words, quote(s))
				}
			}
			return strings.TrimSpace(line + " " + strings.Join(words, " "))
		}
	}
	return line
}
