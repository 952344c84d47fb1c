package audit

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// maxDocs bounds the YAML documents one file may hold.
const maxDocs = 10_000

// readDocs parses a foreign YAML (or JSON) file as its own tools read it:
// every document of a multi-document stream, as kubectl apply and Envoy's
// loaders take them, empty documents skipped, and each Kubernetes List
// (kind List, or kind FooList, as kubectl get -o yaml writes a dump)
// replaced by its items. A file with no document in it is an error.
func readDocs(file string, data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []*yaml.Node
	for range maxDocs {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, yamlSyntax(file, err)
		}
		root := &n
		if root.Kind == yaml.DocumentNode {
			if len(root.Content) == 0 {
				continue
			}
			root = root.Content[0]
		}
		if strictyaml.IsNull(root) {
			continue
		}
		out = append(out, listItems(root)...)
	}
	if len(out) == 0 {
		return nil, &Error{File: file, Err: errors.New("the file is empty")}
	}
	return out, nil
}

// listItems returns a Kubernetes List's items, or n itself.
func listItems(n *yaml.Node) []*yaml.Node {
	if n.Kind != yaml.MappingNode {
		return []*yaml.Node{n}
	}
	k := strictyaml.Lookup(n, "kind")
	items := strictyaml.Lookup(n, "items")
	if k == nil || items == nil || k.Kind != yaml.ScalarNode || !strings.HasSuffix(k.Value, "List") || items.Kind != yaml.SequenceNode {
		return []*yaml.Node{n}
	}
	var out []*yaml.Node
	for _, it := range items.Content {
		if !strictyaml.IsNull(it) {
			out = append(out, listItems(it)...)
		}
	}
	return out
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlSyntax moves the line out of the YAML parser's message.
func yamlSyntax(file string, err error) error {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Err: errors.New(m[2])}
	}
	return &Error{File: file, Err: errors.New(strings.TrimPrefix(msg, "yaml: "))}
}

// resourceKind returns a Kubernetes resource's kind and metadata.name,
// or empty strings for a document that is not one.
func resourceKind(n *yaml.Node) (kind, name string) {
	if n == nil || n.Kind != yaml.MappingNode {
		return "", ""
	}
	if k := strictyaml.Lookup(n, "kind"); k != nil && k.Kind == yaml.ScalarNode {
		kind = k.Value
	}
	if md := strictyaml.Lookup(n, "metadata"); md != nil && md.Kind == yaml.MappingNode {
		if v := strictyaml.Lookup(md, "name"); v != nil && v.Kind == yaml.ScalarNode {
			name = v.Value
		}
	}
	return kind, name
}
