package samtemplate

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Decode parses a YAML (or JSON) CloudFormation document into plain Go
// values: map[string]any, []any, string, int64, uint64, float64, bool and
// nil. The short-form tags of CloudFormation become their long forms:
// !Ref x is {"Ref": x}, !GetAtt a.b is {"Fn::GetAtt": [a, b]}, and any
// other !Name v is {"Fn::Name": v}.
func Decode(src []byte) (map[string]any, error) {
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return nil, err
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return nil, fmt.Errorf("want one YAML document, found %d", len(f.Docs))
	}
	v, err := value(f.Docs[0].Body)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document is not a mapping")
	}
	return m, nil
}

func value(n ast.Node) (any, error) {
	switch n := n.(type) {
	case nil:
		return nil, nil
	case *ast.MappingNode:
		m := make(map[string]any, len(n.Values))
		for _, kv := range n.Values {
			if err := pair(m, kv); err != nil {
				return nil, err
			}
		}
		return m, nil
	case *ast.MappingValueNode:
		m := map[string]any{}
		if err := pair(m, n); err != nil {
			return nil, err
		}
		return m, nil
	case *ast.SequenceNode:
		s := make([]any, 0, len(n.Values))
		for _, e := range n.Values {
			v, err := value(e)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case *ast.TagNode:
		return tagged(n)
	case *ast.AnchorNode:
		return value(n.Value)
	case *ast.AliasNode:
		return nil, fmt.Errorf("line %d: YAML aliases are not supported in a CloudFormation template", n.GetToken().Position.Line)
	case *ast.CommentNode:
		return nil, nil
	case *ast.LiteralNode:
		return n.Value.GetValue(), nil
	case ast.ScalarNode:
		return n.GetValue(), nil
	default:
		return nil, fmt.Errorf("line %d: unexpected YAML node %s", n.GetToken().Position.Line, n.Type())
	}
}

func pair(m map[string]any, kv *ast.MappingValueNode) error {
	k, err := value(kv.Key)
	if err != nil {
		return err
	}
	v, err := value(kv.Value)
	if err != nil {
		return err
	}
	m[fmt.Sprint(k)] = v
	return nil
}

func tagged(n *ast.TagNode) (any, error) {
	tag := n.Start.Value
	v, err := value(n.Value)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(tag, "!!") {
		if tag == "!!str" && v != nil {
			return fmt.Sprint(v), nil
		}
		return v, nil
	}
	name := strings.TrimPrefix(tag, "!")
	switch name {
	case "Ref", "Condition":
		return map[string]any{name: v}, nil
	case "GetAtt":
		if s, ok := v.(string); ok {
			res, attr, found := strings.Cut(s, ".")
			if !found {
				return nil, fmt.Errorf("line %d: !GetAtt %q wants Resource.Attribute", n.GetToken().Position.Line, s)
			}
			return map[string]any{"Fn::GetAtt": []any{res, attr}}, nil
		}
		return map[string]any{"Fn::GetAtt": v}, nil
	default:
		return map[string]any{"Fn::" + name: v}, nil
	}
}
