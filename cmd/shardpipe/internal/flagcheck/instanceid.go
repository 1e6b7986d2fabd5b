package flagcheck

// InstanceID says why id is not a legal group.instance.id (the broker's
// rule: 1 to 249 of a-z, A-Z, 0-9, '.', '_' and '-'), or "".
func InstanceID(id string) string {
	switch {
	case id == "":
		return "empty; give each process its own ID, or leave the flag out"
	case len(id) > 249:
		return "longer than 249 characters"
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return "character '" + string(r) + "' not allowed (want a-z, A-Z, 0-9, '.', '_' or '-')"
		}
	}
	return ""
}
