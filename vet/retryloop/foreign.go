package retryloop

import (
	"go/ast"
	"go/types"
	"strings"
)

// foreignSetting reports whether sel selects field v, an exported
// time.Duration (or *time.Duration) of another package's configuration
// struct (a type named …Config, …Options, …Settings or …Params, or a
// section reached from one, or any struct of a package named config)
// that this package never assigns: a setting the user gives, one value
// for every retry.
func (c *checker) foreignSetting(sel *ast.SelectorExpr, v *types.Var) bool {
	if v.Pkg() == nil || v.Pkg() == c.pass.Pkg || !v.Exported() || c.fieldMutated[v] {
		return false
	}
	t := v.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if !isNamed(t, "time", "Duration") {
		return false
	}
	if settingsPkg(v.Pkg().Name()) {
		return true // config.Registry.Retry: a field of the configuration package's
	}
	// cfg.Registry.Retry: the field of a section of a Config
	for x := ast.Expr(sel); ; {
		s, ok := ast.Unparen(x).(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if settingsType(c.info.TypeOf(s.X)) {
			return true
		}
		if f, isField := c.info.Uses[s.Sel].(*types.Var); !isField || !f.IsField() {
			return false
		}
		x = s.X
	}
}

// settingsType reports whether t (or what it points to) is a named type
// whose name says it holds settings (…Config, …Options, …Settings,
// …Params).
func settingsType(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	name := n.Obj().Name()
	for _, suffix := range []string{"Config", "Options", "Settings", "Params"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// settingsPkg reports whether a package's name says it holds settings.
func settingsPkg(name string) bool {
	switch name {
	case "config", "conf", "cfg", "settings", "options":
		return true
	}
	return false
}
