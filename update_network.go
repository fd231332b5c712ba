package main

import (
	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// netUpdateFlags are the flags that change a running container's network allowlist.
func netUpdateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.GenericFlag{Name: "allow-net", Value: &multiFlag{}, Usage: "replace the allow rules with these `DOMAIN[:PORT]` rules (repeatable, or comma-separated; \"\" for none)"},
		&cli.GenericFlag{Name: "deny-net", Value: &multiFlag{}, Usage: "replace the deny rules with these `DOMAIN[:PORT]` rules (\"\" for none)"},
		&cli.BoolFlag{Name: "allow-private-targets", Usage: "let allowed names lead to private addresses (=false to refuse them again)"},
		&cli.GenericFlag{Name: "add-host", Value: &multiFlag{}, Usage: "resolve `NAME:ADDR` on the host's side (added to the current ones)"},
	}
}

func netUpdateGiven(c *cli.Context) bool {
	for _, f := range []string{"allow-net", "deny-net", "allow-private-targets", "add-host"} {
		if c.IsSet(f) {
			return true
		}
	}
	return false
}

// updateNetwork applies the network flags to the policy in force.
func updateNetwork(c *cli.Context, ctr *libbox.Container) error {
	n, err := ctr.Network()
	if err != nil {
		return err
	}
	if c.IsSet("allow-net") {
		n.Allow = splitRules(multi(c, "allow-net"))
	}
	if c.IsSet("deny-net") {
		n.Deny = splitRules(multi(c, "deny-net"))
	}
	if c.IsSet("allow-private-targets") {
		n.AllowPrivateTargets = c.Bool("allow-private-targets")
	}
	if err := addHosts(&n, multi(c, "add-host")); err != nil {
		return err
	}
	return ctr.SetNetwork(n)
}
