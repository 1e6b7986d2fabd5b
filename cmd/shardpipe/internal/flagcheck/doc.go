// Package flagcheck holds the checks of the command's settings that do not
// depend on the command line library: addresses, topic names, lists,
// partition numbers, Redis targets (their URLs' options in range),
// numeric ranges (Range) and replay bounds. Each check says what is wrong in words a
// problem line can quote, or returns the parsed value.
package flagcheck
