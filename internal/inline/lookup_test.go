package inline

import "testing"

func TestUnfold(t *testing.T) {
	tests := []struct {
		lang, code, want string
		dynamic          bool
	}{
		{"python", `getattr(__import__('os'),'sys'+'tem')('id')`, `os.system('id')`, false},
		{"python", `import importlib; importlib.import_module("o"+"s").system("id")`, `import importlib; os.system("id")`, false},
		{"python", `globals()['__builtins__'].exec('x')`, `exec('x')`, false},
		{"python", `__builtins__.__dict__['ev'+'al']('1')`, `eval('1')`, false},
		{"python", `import os,sys; getattr(os, sys.argv[1])('x')`, `import os,sys; getattr(os, sys.argv[1])('x')`, true},
		{"python", `m = __import__(name)`, `m = __import__(name)`, true},
		{"python", `globals()[k]()`, `globals()[k]()`, true},
		{"python", `print(getattr(os, 'sep', '/'))`, `print(getattr(os, 'sep', '/'))`, false},
		{"python", `[os.remove(f) for f in glob.glob('/home/u/*')]`, `[os.remove('/home/u/*') for f in glob.glob('/home/u/*')]`, false},
		{"python", "for p in Path('/srv').rglob('*.db'):\n  p.unlink()", "for p in Path('/srv').rglob('*.db'):\n  Path('/srv/*.db').unlink()", false},
		{"javascript", `require('child_'+'process')['execSync']('id')`, `require('child_process').execSync('id')`, false},
		{"javascript", `global['ev'+'al']('1')`, `eval('1')`, false},
		{"javascript", `require(m).execSync('id')`, `require(m).execSync('id')`, true},
		{"javascript", `console.log(require('./package.json').version)`, `console.log(require('./package.json').version)`, false},
		{"ruby", `send('sys'+'tem', 'id')`, `send('sys'+'tem', 'id')`, false},
	}
	for _, tt := range tests {
		got, dyn := unfold(tt.lang, tt.code)
		if got != tt.want || dyn != tt.dynamic {
			t.Errorf("unfold(%s, %q) = %q, %v; want %q, %v", tt.lang, tt.code, got, dyn, tt.want, tt.dynamic)
		}
	}
}

func FuzzUnfold(f *testing.F) {
	for _, s := range []string{`getattr(__import__('os'),'sys'+'tem')('id')`, `'a'+'b'+'c'`, `for f in glob.glob('x'): os.remove(f)`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		for _, lang := range []string{"python", "javascript"} {
			out, _ := unfold(lang, code)
			if len(out) > len(code)+8*2*maxBoundDeletes*(256+16) {
				t.Fatalf("unfold grew %d bytes to %d", len(code), len(out))
			}
		}
	})
}
