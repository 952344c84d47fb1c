package retryloop

import (
	"fmt"
	"go/types"
)

// A client's retry delay is often a field of an options struct declared in
// another package of its module (types.TransportOption.RetryDelay), whose
// default a builder there sets (RetryDelay: 2 * time.Second) and whose
// setter only the user calls. The package that waits it sees neither, so
// the package that declares the field says what it holds in a fact.

// SettingFact carries what an exported duration field of a struct holds,
// as its own package sees it: pure (a constant default, or only what the
// user sets, the same on every retry) or random.
type SettingFact struct {
	Kind      int
	ByDefault bool
	Caller    bool
}

// AFact marks SettingFact as an analysis fact.
func (*SettingFact) AFact() {}

// String prints the fact as the analyzer's tests match it.
func (f *SettingFact) String() string {
	return fmt.Sprintf("setting kind=%d bydefault=%v caller=%v", f.Kind, f.ByDefault, f.Caller)
}

// exportSettings gives each exported time.Duration field of the package's
// exported struct types that the package gives a value (a constructor's or
// builder's default), pure or random by those values, a SettingFact.
func (c *checker) exportSettings() {
	scope := c.pass.Pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || !tn.Exported() || tn.IsAlias() {
			continue
		}
		st, ok := tn.Type().Underlying().(*types.Struct)
		if !ok {
			continue
		}
		for f := range st.Fields() {
			if !f.Exported() || !isNamed(f.Type(), "time", "Duration") || len(c.fieldValues[f]) == 0 {
				// a field the package gives no value may be state
				// another package keeps: out of sight, as before
				continue
			}
			if p := c.fieldPurity(f, 0); p.kind == pPure || p.kind == pRand {
				c.exportFact(f, &SettingFact{Kind: p.kind, ByDefault: p.byDefault, Caller: p.caller})
			}
		}
	}
}

// importedSetting is the purity a field of another package carries in its
// SettingFact, if it has one.
func (c *checker) importedSetting(v *types.Var) (purity, bool) {
	if v.Pkg() == nil || v.Pkg() == c.pass.Pkg || !v.IsField() {
		return purity{}, false
	}
	var f SettingFact
	if !c.pass.ImportObjectFact(v, &f) {
		return purity{}, false
	}
	return purity{kind: f.Kind, byDefault: f.ByDefault, caller: f.Caller}, true
}
