package schema

// Fast reports whether s has a fast validator and, if so, its answer on v.
func (s *Schema) Fast(v any) (has, valid bool) {
	if s.fast == nil {
		return false, false
	}
	return true, s.fast.valid(v)
}

// Full returns jsonschema's answer on v, without the fast validator.
func (s *Schema) Full(v any) error {
	sch := s.sch
	if sch == nil {
		var err error
		if sch, err = s.lazy(); err != nil {
			return err
		}
	}
	return sch.Validate(v)
}

// Compiled reports whether jsonschema has compiled s yet.
func (s *Schema) Compiled() bool { return s.sch != nil }
