// Package cliflags builds the commands of a urfave/cli program from flag
// groups: flags that several commands take, defined once with the one
// validator of their values (Group). Every flag reads an environment
// variable named after it (Env), and every problem of a command line, of
// the environment and of the settings is reported at once, one line each
// (UsageError), before the command runs: the command line library alone
// stops at the first. A mistyped command or flag gets a "did you mean".
package cliflags
