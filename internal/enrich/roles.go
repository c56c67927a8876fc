package enrich

import (
	"path"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
)

// Tool roles: a tool nobody listed still says what it does through the
// names of its input fields. A path under a path-like field, text under a
// content-like field, a command under a command-like field: the field
// names below are compared after folding case and dropping _ and -, so
// file_path, filePath, FilePath and file-path are one name.

// isRole reports whether field name k, folded (lower case, without _ and
// -), is in names: file_path, filePath, FilePath and file-path are one
// name. It folds into a stack buffer, so a lookup allocates nothing.
func isRole(names map[string]bool, k string) bool {
	var buf [48]byte
	n := 0
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || c == '-':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		if n == len(buf) {
			return false // no role name is this long
		}
		buf[n] = c
		n++
	}
	return names[string(buf[:n])]
}

// pathRoleKeys are the folded names of fields that name one file or
// directory, across harnesses: Claude's file_path, Gemini's dir_path,
// Windsurf's TargetFile, AbsolutePath, SearchPath, DirectoryPath,
// SearchDirectory, Goose's and Augment's path, LSP-style uri.
var pathRoleKeys = map[string]bool{
	"path": true, "filepath": true, "file": true, "filename": true, "absolutepath": true,
	"targetfile": true, "targetpath": true, "notebookpath": true, "dirpath": true,
	"directory": true, "directorypath": true, "dir": true, "folder": true, "folderpath": true,
	"searchpath": true, "searchdirectory": true, "target": true, "source": true,
	"destination": true, "sourcepath": true, "destinationpath": true, "src": true, "dest": true,
	"dst": true, "uri": true, "fileuri": true, "root": true, "rootpath": true,
}

// urlRoleKeys are the folded names of fields that hold a URL a tool
// contacts.
var urlRoleKeys = map[string]bool{
	"url": true, "uri": true, "href": true, "link": true, "endpoint": true, "targeturl": true,
	"pageurl": true, "baseurl": true, "webhookurl": true, "requesturl": true,
}

// pathListRoleKeys are the folded names of fields that hold a list of
// files (Gemini's paths, filePaths, file_list, uris of file:// URLs).
var pathListRoleKeys = map[string]bool{
	"paths": true, "filepaths": true, "files": true, "filelist": true, "filenames": true,
	"targetfiles": true, "targetpaths": true, "sourcepaths": true, "uris": true, "fileuris": true,
}

// uriRoleKeys are the path-like fields that may hold a URI.
var uriRoleKeys = map[string]bool{"uri": true, "fileuri": true}

// contentRoleKeys are the folded names of fields that carry text to write.
var contentRoleKeys = map[string]bool{
	"content": true, "contents": true, "newstring": true, "newstr": true, "filetext": true,
	"codeedit": true, "text": true, "patch": true, "diff": true, "newsource": true, "code": true,
	"codecontent": true, "filecontent": true, "newcontent": true, "replacement": true,
	"replacementcontent": true, "replacementchunks": true, "newstr1": true, "body": true,
	"newtext": true,
}

// commandRoleKeys are the folded names of fields that hold a command line.
var commandRoleKeys = map[string]bool{
	"command": true, "cmd": true, "commandline": true, "clicommand": true, "shellcommand": true,
	"cmdline": true, "bashcommand": true,
}

// editorVerbs are the values of an editor tool's command field (Anthropic's
// str_replace_based_edit_tool, Goose's text_editor, Augment's
// str-replace-editor), with the family each verb acts as. Such a command
// field names an editing act, never a program.
var editorVerbs = map[string]string{
	"view": FamilyFileRead, "read": FamilyFileRead,
	"create": FamilyFileWrite, "write": FamilyFileWrite,
	"str_replace": FamilyFileEdit, "insert": FamilyFileEdit, "undo_edit": FamilyFileEdit,
	"replace": FamilyFileEdit, "edit": FamilyFileEdit, "delete": FamilyFileEdit,
}

// editorTools are tools whose command field is an editor verb.
var editorTools = map[string]bool{
	"str_replace_editor": true, "str_replace_based_edit_tool": true, "text_editor": true,
	"developer__text_editor": true, "str-replace-editor": true,
}

// roleKeyPaths returns the path-like fields of input: key and value, in
// the object's order. A uri field is a path only as a file:// URI or a
// plain path.
func roleKeyPaths(input ast.Object) (keys, paths []string) {
	if input == nil {
		return nil, nil
	}
	// The keys known by name first, in their order, then any other
	// path-like key.
	for _, k := range pathKeys {
		v := field(input, k)
		if s, ok := v.(ast.String); ok {
			// The usual shape, read without building a list.
			if s != "" {
				keys, paths = append(keys, k), append(paths, string(s))
			}
			continue
		}
		for _, s := range texts(v) {
			if s != "" {
				keys, paths = append(keys, k), append(paths, s)
			}
		}
	}
	input.Foreach(func(k, v *ast.Term) {
		ks, ok := k.Value.(ast.String)
		if !ok {
			return
		}
		urlField := isRole(urlRoleKeys, string(ks)) && !isRole(uriRoleKeys, string(ks))
		if !urlField && (!isRole(pathRoleKeys, string(ks)) || slices.Contains(pathKeys, string(ks))) {
			return // no path field, or one read above: nothing to read
		}
		for _, s := range texts(v.Value) {
			if s == "" {
				continue
			}
			if urlField {
				// A URL field names a file only as a file:// URL.
				if rest, ok := cutFileURL(s); ok {
					keys, paths = append(keys, string(ks)), append(paths, rest)
				}
				continue
			}
			p := s
			if isRole(uriRoleKeys, string(ks)) {
				rest, isFile := strings.CutPrefix(p, "file://")
				if !isFile && strings.Contains(p, "://") {
					continue
				}
				p = rest
			}
			keys, paths = append(keys, string(ks)), append(paths, p)
		}
	})
	return keys, paths
}

// cutFileURL returns the path of a file:// URL (file:///etc/x, or
// file://localhost/etc/x).
func cutFileURL(s string) (string, bool) {
	if len(s) < len("file://") || !strings.EqualFold(s[:len("file://")], "file://") {
		return "", false
	}
	rest := strings.TrimPrefix(s[len("file://"):], "localhost")
	if !strings.HasPrefix(rest, "/") {
		return "", false
	}
	return rest, true
}

// hasFileURL reports whether a URL-like field of input is a file:// URL:
// a fetch or a browser opening one reads that file.
func hasFileURL(input ast.Object) bool {
	found := false
	if input == nil {
		return false
	}
	input.Until(func(k, v *ast.Term) bool {
		ks, ok := k.Value.(ast.String)
		if !ok || !isRole(urlRoleKeys, string(ks)) {
			return false
		}
		s, ok := v.Value.(ast.String)
		if ok {
			_, found = cutFileURL(string(s))
		}
		return found
	})
	return found
}

// hasRole reports whether input has a non-empty string field whose folded
// name is in names (any value, when names is contentRoleKeys: a chunk
// list is content too).
func hasRole(input ast.Object, names map[string]bool) (value string, ok bool) {
	if input == nil {
		return "", false
	}
	input.Until(func(k, v *ast.Term) bool {
		ks, isStr := k.Value.(ast.String)
		if !isStr || !isRole(names, string(ks)) {
			return false
		}
		switch x := v.Value.(type) {
		case ast.String:
			value, ok = string(x), x != ""
		case *ast.Array:
			ok = x.Len() > 0
		}
		return ok
	})
	return value, ok
}

// editorFamily returns the family an editor tool acts as for its verb,
// "" when tool is not one or the verb is unknown (it keeps its family).
func editorFamily(tool string, input ast.Object) string {
	if !editorTools[tool] {
		return ""
	}
	verb, _ := text(input, "command")
	return editorVerbs[verb]
}

// inferFamily judges a tool nobody listed by its fields: an editor verb
// with a path, a command line, a path with or without text to write.
func inferFamily(input ast.Object) string {
	cmd, hasCmd := hasRole(input, commandRoleKeys)
	_, hasPath := hasRole(input, pathRoleKeys)
	if !hasPath {
		_, hasPath = hasRole(input, pathListRoleKeys)
	}
	if hasCmd && hasPath {
		if f, ok := editorVerbs[cmd]; ok {
			return f
		}
	}
	if hasCmd {
		if _, isVerb := editorVerbs[cmd]; !isVerb {
			return FamilyShell
		}
	}
	if hasPath {
		if _, ok := hasRole(input, contentRoleKeys); ok {
			return FamilyFileWrite
		}
		return FamilyFileRead
	}
	return ""
}

// roleCommandFields are read for the command of a shell tool whose shape
// is not known, after commandFields: the spellings of other harnesses.
var roleCommandFields = []adapters.Field{
	{"CommandLine"}, {"commandLine"}, {"command_line"}, {"cli_command"}, {"shell_command"}, {"cmdline"},
}

// stdinTools are tools that type into a process or terminal started by
// an earlier call: what they send is read as shell input (Codex's
// write_stdin, which no hook saw on the real agent; Augment's
// write-process; Desktop Commander's interact_with_process; Windsurf's
// send_command_input; the send-keys tools of terminal and tmux servers).
// Names are folded (foldName): send_keys, send-keys and sendKeys are one.
var stdinTools = map[string]adapters.Shell{
	"writestdin":          {Command: []adapters.Field{{"chars"}}},
	"writeprocess":        {Command: []adapters.Field{{"input_text"}}},
	"interactwithprocess": {Command: []adapters.Field{{"input"}}},
	"sendcommandinput":    {Command: []adapters.Field{{"Input"}, {"input"}}},
	"writebash":           {Command: []adapters.Field{{"input"}}}, // Copilot CLI: into an async bash session
	"sendkeys":            {Command: []adapters.Field{{"keys"}, {"text"}, {"input"}}},
	"tmuxsendkeys":        {Command: []adapters.Field{{"keys"}, {"text"}, {"command"}}},
	"sendinput":           {Command: []adapters.Field{{"input"}, {"text"}, {"data"}}},
	"writeinput":          {Command: []adapters.Field{{"input"}, {"text"}, {"data"}}},
	"terminalwrite":       {Command: []adapters.Field{{"text"}, {"input"}, {"data"}}},
	"writetoterminal":     {Command: []adapters.Field{{"text"}, {"input"}, {"data"}}},
	"sendtoterminal":      {Command: []adapters.Field{{"text"}, {"input"}, {"data"}}},
	"terminalsendtext":    {Command: []adapters.Field{{"text"}}},
}

// Search scope: what a file search really reaches. A search tool names a
// root (its path, or the session's directory when it names none) and
// often a filter (Grep's glob, Gemini's include, Glob's own pattern,
// Windsurf's Includes). The filter joined to the root is one more path
// object, key "filter", so that Grep over ~ with glob "*.go" is judged by
// ~/**/*.go (no secret there) rather than by ~ alone.

// fileSearchTools are the search tools that read files under a root.
var fileSearchTools = map[string]bool{
	"grep": true, "glob": true, "search_file_content": true, "grep_search": true,
	"file_search": true, "search_files": true, "search_code": true, "find_by_name": true,
	"codebase_search": true, "ripgrep": true, "rg": true, "find": true, "search": true,
}

// filterKeys are the fields of a search tool that filter the files under
// its root; the pattern of a glob tool is one.
var filterKeys = []string{"glob", "include", "includes", "Includes", "include_pattern", "file_pattern", "filePattern", "Pattern"}

// searchScope returns the filter paths of a file search, joined to its
// root, and the root when the tool names none ("." for the session's
// directory).
func searchScope(tool string, input ast.Object, named []string) (keys, paths []string) {
	if !fileSearchTools[tool] {
		return nil, nil
	}
	root := "."
	if len(named) > 0 {
		root = named[0]
	} else {
		keys, paths = append(keys, "cwd"), append(paths, ".")
	}
	var filters []string
	if globTools[tool] {
		if s, ok := text(input, "pattern"); ok && s != "" && !isPathPattern(s) {
			filters = append(filters, s)
		}
	}
	for _, k := range filterKeys {
		switch v := field(input, k).(type) {
		case ast.String:
			filters = append(filters, string(v))
		case *ast.Array:
			for i := range v.Len() {
				if s, ok := asText(v.Elem(i).Value); ok {
					filters = append(filters, s)
				}
			}
		}
	}
	// Claude's Grep filters by file type too: type "py" is *.py.
	if t, ok := text(input, "type"); ok && tool == "grep" && t != "" && !strings.ContainsAny(t, "/*?[{") {
		filters = append(filters, "*."+t)
	}
	for _, f := range filters {
		if f == "" || isPathPattern(f) {
			continue
		}
		if !strings.Contains(f, "/") && !strings.HasPrefix(f, "**") {
			// A bare name pattern filters at every depth.
			f = "**/" + f
		}
		keys, paths = append(keys, "filter"), append(paths, path.Join(root, f))
	}
	return keys, paths
}

// scope returns input.ahp.tool.scope of a file search: its filters joined
// to its root, and the session's directory when it names no path. They
// are kept apart from tool.paths, which are what the tool shows: Glob
// **/*.pem lists key files' names, it does not read them.
func (en *enricher) scope(c *call, toolItems [][2]*ast.Term) *ast.Term {
	var named []string
	for _, it := range toolItems {
		if it[0].Equal(keyPaths) {
			arr, _ := it[1].Value.(*ast.Array)
			for i := 0; arr != nil && i < arr.Len(); i++ {
				if o, ok := arr.Elem(i).Value.(ast.Object); ok {
					if s, ok := text(o, "raw"); ok {
						named = append(named, s)
					}
				}
			}
		}
	}
	keys, paths := searchScope(c.tool, c.input, named)
	if len(paths) == 0 {
		return nil
	}
	terms := make([]*ast.Term, 0, len(paths))
	for i, p := range paths {
		if t := en.path(p, keyKey, ast.StringTerm(keys[i])); t != nil {
			terms = append(terms, t)
		}
	}
	return ast.ArrayTerm(terms...)
}
