package inline

// callKind says what a call does with its arguments.
type callKind uint8

const (
	kShell     callKind = iota + 1 // runs its first argument as a shell command line
	kProcess                       // runs a program: a list is argv, a lone string a command line
	kRemove                        // deletes a file; recursively when told "recursive"
	kRemoveAll                     // deletes a tree
	kRead                          // reads the file named by its first argument
	kWrite                         // writes the file named by its first argument
	kAppend                        // appends to the file named by its first argument
	kWriteLast                     // writes the file named by its last argument (R's writeLines)
	kOpen                          // opens a file; the mode argument says how
	kCopy                          // copies its first argument to its second
	kMove                          // moves its first argument to its second
	kFetch                         // fetches a URL; a second argument is where to save it
	kEval                          // runs its argument as code of the same language
	kDecode                        // decodes base64 or hex: hidden code
	kSocket                        // opens a network connection
	kDup                           // ties a descriptor to another: dup2, reopen, pty.spawn
	kHome                          // returns the home directory
	kJoin                          // joins path parts
	kSame                          // returns its first argument as a path: expanduser, realpath
	kList                          // builds a list: R's c(), PHP's array()
	kEnv                           // reads an environment variable: the value of HOME is ~
	kGlob                          // lists the files a pattern matches: the pattern stands for them
)

// quoteLike is a prefixed string form such as q{…}, qx(…) or %w[…].
type quoteLike struct {
	prefix string
	kind   tokKind
	interp bool
}

// language holds what the analysis knows of one language: its lexical
// syntax and the calls that matter.
type language struct {
	name string
	// Lexical syntax.
	comments      []string
	single        bool // '…' strings
	singleEscapes bool // escapes resolved in '…'
	double        bool // "…" strings
	interp        bool // "…" interpolates
	interpMark    string
	backtick      tokKind // kind of `…`, 0 when not a string
	pyPrefixes    bool    // r"…", f"…", '''…'''
	longBrackets  bool    // Lua's [[…]]
	quoteLike     []quoteLike
	sigils        bool // $x, @x, %x are names
	dots          bool // a.b is one name
	// Expressions.
	concat    map[string]bool // operators that join strings
	juxtapose bool            // adjacent strings are joined (awk)
	bareCalls bool            // a call's arguments may follow without parentheses
	// calls maps a call name, with or without its qualifier, to its kind.
	calls map[string]callKind
	// wholeEnv names the whole environment as one value (os.environ,
	// process.env, ENV.to_h, %ENV), and shows the calls that print or
	// serialise a value: together they dump every variable, secrets
	// included. A single variable (os.environ['HOME']) is another name.
	wholeEnv map[string]bool
	shows    map[string]bool
	// pageStores are a web page's stores of session secrets (cookies,
	// local and session storage): a page script that sends one over the
	// network hands the page's login to another host.
	pageStores []string
}

var python = &language{
	name:     "python",
	comments: []string{"#"}, single: true, singleEscapes: true, double: true,
	pyPrefixes: true, interpMark: "{", dots: true,
	concat: map[string]bool{"+": true},
	calls: map[string]callKind{
		"os.system": kShell, "os.popen": kShell, "subprocess.getoutput": kShell,
		"subprocess.getstatusoutput": kShell, "commands.getoutput": kShell, "getoutput": kShell,
		"subprocess.run": kProcess, "subprocess.call": kProcess, "subprocess.check_call": kProcess,
		"subprocess.check_output": kProcess, "subprocess.Popen": kProcess, "Popen": kProcess,
		"check_output": kProcess, "check_call": kProcess,
		"os.execv": kProcess, "os.execve": kProcess, "os.execvp": kProcess, "os.execvpe": kProcess,
		"os.execl": kProcess, "os.execle": kProcess, "os.execlp": kProcess, "os.execlpe": kProcess,
		"os.spawnv": kProcess, "os.spawnvp": kProcess, "os.spawnl": kProcess, "os.spawnlp": kProcess,
		"os.posix_spawn": kProcess, "os.posix_spawnp": kProcess, "pty.spawn": kProcess,
		"asyncio.create_subprocess_shell": kShell, "create_subprocess_shell": kShell,
		"asyncio.create_subprocess_exec": kProcess, "create_subprocess_exec": kProcess,
		"shutil.rmtree": kRemoveAll, "rmtree": kRemoveAll,
		"os.remove": kRemove, "os.unlink": kRemove, "os.rmdir": kRemove, "os.removedirs": kRemove,
		"open": kOpen, "io.open": kOpen, "codecs.open": kOpen, "os.open": kOpen,
		"shutil.copy": kCopy, "shutil.copy2": kCopy, "shutil.copyfile": kCopy, "shutil.copytree": kCopy,
		"shutil.move": kMove, "os.rename": kMove, "os.replace": kMove,
		"urllib.request.urlopen": kFetch, "urlopen": kFetch, "urllib.request.urlretrieve": kFetch,
		"urlretrieve": kFetch, "urllib.urlopen": kFetch, "urllib2.urlopen": kFetch,
		"requests.get": kFetch, "requests.post": kFetch, "requests.put": kFetch,
		"requests.request": kFetch, "httpx.get": kFetch, "httpx.post": kFetch,
		"http.client.HTTPConnection": kFetch, "http.client.HTTPSConnection": kFetch,
		"exec": kEval, "eval": kEval, "compile": kEval,
		"base64.b64decode": kDecode, "b64decode": kDecode, "base64.decodebytes": kDecode,
		"base64.b32decode": kDecode, "bytes.fromhex": kDecode, "binascii.unhexlify": kDecode,
		"codecs.decode": kDecode, "zlib.decompress": kDecode, "marshal.loads": kDecode,
		"socket.socket": kSocket, "socket.create_connection": kSocket,
		"os.dup2": kDup, "dup2": kDup,
		"os.path.expanduser": kSame, "expanduser": kSame, "os.path.abspath": kSame,
		"os.path.realpath": kSame, "os.path.normpath": kSame, "os.path.expandvars": kSame,
		"str": kSame, "pathlib.Path": kJoin, "Path": kJoin, "PurePath": kJoin, "os.path.join": kJoin,
		"Path.home": kHome, "pathlib.Path.home": kHome,
		"os.getenv": kEnv, "os.environ.get": kEnv, "os.environ": kEnv,
		// A database file opened is read: a browser's Cookies or Login Data.
		"sqlite3.connect": kRead, "duckdb.connect": kRead,
		".read_text": kRead, ".read_bytes": kRead, ".write_text": kWrite, ".write_bytes": kWrite,
		".unlink": kRemove, ".rmdir": kRemove, ".joinpath": kJoin, ".expanduser": kSame, ".resolve": kSame,
		"glob.glob": kGlob, "glob.iglob": kGlob, "glob": kGlob, "iglob": kGlob, ".glob": kGlob, ".rglob": kGlob,
	},
	wholeEnv: map[string]bool{"os.environ": true, "environ": true, "os.environ.items": true, "os.environ.copy": true, "os.environ.values": true, "environ.items": true},
	shows:    map[string]bool{"print": true, "pprint": true, "pprint.pprint": true, "json.dumps": true, "json.dump": true, "sys.stdout.write": true, "repr": true},
}

var javascript = &language{
	name:     "javascript",
	comments: []string{"//", "/*"}, single: true, singleEscapes: true, double: true,
	backtick: tokStr, interpMark: "${", dots: true,
	concat: map[string]bool{"+": true},
	calls: map[string]callKind{
		"exec": kShell, "execSync": kShell, "child_process.exec": kShell,
		"spawn": kProcess, "spawnSync": kProcess, "execFile": kProcess, "execFileSync": kProcess,
		"fork": kProcess, "Bun.spawn": kProcess, "Bun.spawnSync": kProcess, "Deno.Command": kProcess,
		"rmSync": kRemove, "rm": kRemove, "rmdirSync": kRemove, "rmdir": kRemove,
		"unlinkSync": kRemove, "unlink": kRemove, "Deno.remove": kRemove, "Deno.removeSync": kRemove,
		"removeSync": kRemoveAll, "remove": kRemoveAll, "rimraf": kRemoveAll, "rimraf.sync": kRemoveAll,
		"emptyDirSync": kRemoveAll,
		"globSync":     kGlob, "glob.sync": kGlob, "fg.sync": kGlob, "fastGlob.sync": kGlob, "Bun.Glob": kGlob,
		"readFileSync": kRead, "readFile": kRead, "createReadStream": kRead, "Deno.readTextFile": kRead,
		"Deno.readTextFileSync": kRead, "Deno.readFile": kRead, "Bun.file": kRead,
		"writeFileSync": kWrite, "writeFile": kWrite, "createWriteStream": kWrite,
		"Deno.writeTextFile": kWrite, "Deno.writeTextFileSync": kWrite, "Bun.write": kWrite,
		"appendFileSync": kAppend, "appendFile": kAppend,
		"copyFileSync": kCopy, "copyFile": kCopy, "cpSync": kCopy, "renameSync": kMove, "rename": kMove,
		"fetch": kFetch, "http.get": kFetch, "https.get": kFetch, "http.request": kFetch,
		"https.request": kFetch, "axios.get": kFetch, "axios.post": kFetch, "axios": kFetch,
		"eval": kEval, "Function": kEval, "vm.runInThisContext": kEval, "vm.runInNewContext": kEval,
		"runInThisContext": kEval,
		"atob":             kDecode, "Buffer.from": kDecode,
		"net.connect": kSocket, "net.createConnection": kSocket, "net.Socket": kSocket,
		"navigator.sendBeacon": kSocket, "XMLHttpRequest": kSocket, "WebSocket": kSocket, "EventSource": kSocket,
		"Deno.connect": kSocket, "Bun.connect": kSocket, "tls.connect": kSocket,
		"os.homedir": kHome, "homedir": kHome, "path.join": kJoin, "path.resolve": kJoin,
		"join": kJoin, "resolve": kJoin, "path.normalize": kSame,
		"process.env.HOME": kEnv, "Bun.env.HOME": kEnv, "import.meta.env.HOME": kEnv, "Deno.env.get": kEnv,
	},
	wholeEnv:   map[string]bool{"process.env": true, "Deno.env.toObject": true, "Bun.env": true},
	pageStores: []string{"document.cookie", "localStorage", "sessionStorage", "window.localStorage", "window.sessionStorage", "cookieStore", "indexedDB"},
	shows:      map[string]bool{"console.log": true, "console.dir": true, "console.error": true, "console.info": true, "console.table": true, "JSON.stringify": true, "process.stdout.write": true},
}

var perl = &language{
	name:     "perl",
	comments: []string{"#"}, single: true, double: true, interp: true, interpMark: "$",
	backtick: tokShell, sigils: true,
	quoteLike: []quoteLike{
		{"qq", tokStr, true}, {"qx", tokShell, true}, {"qw", tokWords, false}, {"q", tokStr, false},
	},
	concat:    map[string]bool{".": true},
	bareCalls: true,
	calls: map[string]callKind{
		"system": kProcess, "exec": kProcess, "readpipe": kShell,
		"rmtree": kRemoveAll, "File::Path::rmtree": kRemoveAll, "remove_tree": kRemoveAll,
		"File::Path::remove_tree": kRemoveAll, "unlink": kRemove, "rmdir": kRemove, "glob": kGlob,
		"open": kOpen, "sysopen": kOpen, "read_file": kRead, "File::Slurp::read_file": kRead,
		"path": kJoin, "catfile": kJoin, "File::Spec->catfile": kJoin, "catdir": kJoin,
		"copy": kCopy, "File::Copy::copy": kCopy, "move": kMove, "rename": kMove,
		"get": kFetch, "getstore": kFetch, "getprint": kFetch, "mirror": kFetch,
		"LWP::Simple::get": kFetch, "HTTP::Tiny->new->get": kFetch, "->get": kFetch, "->request": kFetch,
		"eval":          kEval,
		"decode_base64": kDecode, "MIME::Base64::decode_base64": kDecode, "pack": kDecode, "unpack": kDecode,
		"socket": kSocket, "IO::Socket::INET->new": kSocket, "IO::Socket::INET": kSocket,
		"IO::Socket::IP->new": kSocket, "connect": kSocket,
	},
	wholeEnv: map[string]bool{"%ENV": true},
	shows:    map[string]bool{"print": true, "say": true, "printf": true, "Dumper": true},
}

var ruby = &language{
	name:     "ruby",
	comments: []string{"#"}, single: true, double: true, interp: true, interpMark: "#{",
	backtick: tokShell, dots: true,
	quoteLike: []quoteLike{
		{"%x", tokShell, true}, {"%w", tokWords, false}, {"%W", tokWords, false},
		{"%q", tokStr, false}, {"%Q", tokStr, true},
	},
	concat:    map[string]bool{"+": true},
	bareCalls: true,
	calls: map[string]callKind{
		"system": kProcess, "exec": kProcess, "spawn": kProcess, "Process.spawn": kProcess,
		"Kernel.system": kProcess, "Kernel.exec": kProcess, "Kernel.spawn": kProcess,
		"IO.popen": kProcess, "Open3.capture2": kProcess, "Open3.capture2e": kProcess,
		"Open3.capture3": kProcess, "Open3.popen3": kProcess, "Open3.popen2": kProcess,
		"PTY.spawn":       kProcess,
		"FileUtils.rm_rf": kRemoveAll, "FileUtils.rm_r": kRemoveAll, "FileUtils.remove_dir": kRemoveAll,
		"FileUtils.remove_entry": kRemoveAll, "FileUtils.remove_entry_secure": kRemoveAll,
		"rm_rf": kRemoveAll, "rm_r": kRemoveAll, "FileUtils.rmtree": kRemoveAll,
		"File.delete": kRemove, "File.unlink": kRemove, "FileUtils.rm": kRemove, "Dir.rmdir": kRemove,
		"Dir.glob":  kGlob,
		"File.read": kRead, "IO.read": kRead, "File.readlines": kRead, "IO.readlines": kRead,
		"File.binread": kRead, "File.foreach": kRead,
		"File.write": kWrite, "IO.write": kWrite, "File.binwrite": kWrite,
		"File.open": kOpen, "open": kOpen,
		"FileUtils.cp": kCopy, "FileUtils.cp_r": kCopy, "FileUtils.mv": kMove, "File.rename": kMove,
		"Net::HTTP.get": kFetch, "Net::HTTP.get_response": kFetch, "URI.open": kFetch,
		"URI.parse": kSame, "URI": kSame, "HTTParty.get": kFetch, "Faraday.get": kFetch,
		"eval": kEval, "instance_eval": kEval, "class_eval": kEval,
		"Base64.decode64": kDecode, "Base64.strict_decode64": kDecode, "unpack1": kDecode,
		"TCPSocket.new": kSocket, "TCPSocket.open": kSocket, "Socket.tcp": kSocket,
		"$stdin.reopen": kDup, "STDIN.reopen": kDup, "$stdout.reopen": kDup, "STDOUT.reopen": kDup,
		"Dir.home": kHome, "File.join": kJoin, "File.expand_path": kSame, "ENV.fetch": kEnv,
	},
	wholeEnv: map[string]bool{"ENV": true, "ENV.to_h": true, "ENV.to_a": true, "ENV.to_hash": true, "ENV.inspect": true, "ENV.each": true, "ENV.map": true, "ENV.sort": true},
	shows:    map[string]bool{"puts": true, "p": true, "pp": true, "print": true, "JSON.generate": true, "JSON.dump": true, "$stdout.puts": true},
}

var php = &language{
	name:     "php",
	comments: []string{"//", "/*", "#"}, single: true, double: true, interp: true, interpMark: "$",
	backtick: tokShell, sigils: true,
	concat: map[string]bool{".": true},
	calls: map[string]callKind{
		"system": kShell, "exec": kShell, "shell_exec": kShell, "passthru": kShell,
		"popen": kShell, "proc_open": kProcess, "pcntl_exec": kProcess,
		"unlink": kRemove, "rmdir": kRemove,
		"file_get_contents": kRead, "file": kRead, "readfile": kRead, "fopen": kOpen,
		"file_put_contents": kWrite, "copy": kCopy, "rename": kMove,
		"curl_init": kFetch,
		"eval":      kEval, "assert": kEval, "create_function": kEval,
		"base64_decode": kDecode, "gzinflate": kDecode, "str_rot13": kDecode, "hex2bin": kDecode,
		"fsockopen": kSocket, "stream_socket_client": kSocket, "socket_create": kSocket,
		"getenv": kEnv, "array": kList, "glob": kGlob,
	},
	wholeEnv: map[string]bool{"$_ENV": true, "$_SERVER": true, "getenv": true},
	shows:    map[string]bool{"print_r": true, "var_dump": true, "var_export": true, "echo": true, "print": true, "json_encode": true, "phpinfo": true},
}

var lua = &language{
	name:     "lua",
	comments: []string{"--"}, single: true, singleEscapes: true, double: true,
	longBrackets: true, dots: true,
	concat:    map[string]bool{"..": true},
	bareCalls: true,
	calls: map[string]callKind{
		"os.execute": kShell, "io.popen": kShell,
		"os.remove": kRemove, "io.open": kOpen, "io.lines": kRead, "os.rename": kMove,
		"load": kEval, "loadstring": kEval, "dofile": kEval,
		"socket.tcp": kSocket, "socket.connect": kSocket,
		"http.request": kFetch, "os.getenv": kEnv,
	},
}

var rlang = &language{
	name:     "r",
	comments: []string{"#"}, single: true, singleEscapes: true, double: true, dots: true,
	calls: map[string]callKind{
		"system": kShell, "shell": kShell, "system2": kProcess, "processx::run": kProcess,
		"unlink": kRemove, "file.remove": kRemove,
		"readLines": kRead, "readRDS": kRead, "read.csv": kRead, "scan": kRead,
		"writeLines": kWriteLast, "cat": kWriteLast, "saveRDS": kWriteLast,
		"file.copy": kCopy, "file.rename": kMove,
		"download.file": kFetch, "url": kFetch, "httr::GET": kFetch, "GET": kFetch, "source": kFetch,
		"eval": kEval, "base64decode": kDecode, "socketConnection": kSocket,
		"path.expand": kSame, "file.path": kJoin, "normalizePath": kSame,
		"Sys.getenv": kEnv, "c": kList,
	},
}

var awk = &language{
	name:     "awk",
	comments: []string{"#"}, double: true, singleEscapes: true,
	juxtapose: true,
	calls: map[string]callKind{
		"system": kShell,
	},
}

var applescript = &language{
	name:     "applescript",
	comments: []string{"--", "#"}, double: true,
	concat: map[string]bool{"&": true},
	calls:  map[string]callKind{"script": kShell}, // do shell script "…"
}
