package scenario

// Offsets is offsets, for the external tests.
var Offsets = offsets
