// Package fleet is placeholder.
package fleet
