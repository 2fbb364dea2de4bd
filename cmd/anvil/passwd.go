package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/anvilmetal/anvil/internal/serve"
)

func passwdCmd() *cobra.Command {
	var (
		sf       storeFlags
		username string
		fromFile string
		admin    bool
	)
	c := &cobra.Command{
		Use:   "passwd",
		Short: "Set a user's web UI password (prompted, or read from --password-file), creating the user if needed",
		RunE: func(c *cobra.Command, _ []string) error {
			if username == "" {
				return fmt.Errorf("--username is required")
			}
			pw, err := readPassword(c, fromFile)
			if err != nil {
				return err
			}
			if err := serve.SetPassword(c.Context(), sf.data, sf.db, username, pw, admin); err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "password set for %s; log in at /MAAS/\n", username)
			return nil
		},
	}
	sf.register(c)
	c.Flags().StringVar(&username, "username", "", "the user whose password is set")
	c.Flags().StringVar(&fromFile, "password-file", "", "read the password from this file's first line (- for standard input) instead of prompting")
	c.Flags().BoolVar(&admin, "admin", true, "make the user an admin if it does not exist yet (an existing user keeps its role)")
	return c
}

// readPassword never takes the password as a flag: flags end up in shell
// history and in the process list.
func readPassword(c *cobra.Command, fromFile string) (string, error) {
	if fromFile != "" {
		var r io.Reader = os.Stdin
		if fromFile != "-" {
			f, err := os.Open(fromFile)
			if err != nil {
				return "", err
			}
			defer f.Close()
			r = f
		}
		line, err := bufio.NewReader(r).ReadString('\n')
		if err != nil && err != io.EOF {
			return "", err
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return "", fmt.Errorf("standard input is not a terminal: use --password-file")
	}
	fmt.Fprint(c.ErrOrStderr(), "Password: ")
	a, err := term.ReadPassword(fd)
	fmt.Fprintln(c.ErrOrStderr())
	if err != nil {
		return "", err
	}
	fmt.Fprint(c.ErrOrStderr(), "Again: ")
	b, err := term.ReadPassword(fd)
	fmt.Fprintln(c.ErrOrStderr())
	if err != nil {
		return "", err
	}
	if string(a) != string(b) {
		return "", fmt.Errorf("the two passwords differ")
	}
	return string(a), nil
}
