package sink

// appendKey appends r's business key, as Extract reads it, to b. The
// record key and header forms copy their bytes without an intermediate
// string; every other form, and every refusal, goes through Extract, so
// both accept and refuse the same records with the same errors.
func (s KeySource) appendKey(b []byte, r *Record) ([]byte, error) {
	switch s.kind {
	case fromKey:
		if len(r.Key) > 0 {
			return append(b, r.Key...), nil
		}
	case fromHeader:
		if i := headerIndex(r.Headers, s.name); i >= 0 && len(r.Headers[i].Value) > 0 {
			return append(b, r.Headers[i].Value...), nil
		}
	}
	key, err := s.Extract(r)
	if err != nil {
		return b, err
	}
	return append(b, key...), nil
}
