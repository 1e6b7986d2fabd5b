package admin

// Problems returns the problems joined in err (errors.Join, nested too),
// one error each, in order; err alone when it joins nothing. An
// *UnreachableError is one problem, although it wraps two errors.
func Problems(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if _, single := err.(*UnreachableError); !ok || single {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, Problems(e)...)
	}
	return out
}
