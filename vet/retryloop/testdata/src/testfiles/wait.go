// want package:"offline"

// Package testfiles has a deaf sleep in a test file only.
package testfiles

// Nothing is here to find.
func Nothing() {}
