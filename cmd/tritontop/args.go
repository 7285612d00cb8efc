package main

import "flag"

// parseInterspersed parses flags that may come before, between or after
// the positional arguments (`tritontop replay FILE --speed 4` as well as
// `tritontop replay --speed 4 FILE`), which the flag package alone stops
// at the first positional one to do. Everything after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}
