package main

import (
	"encoding/json"

	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/specconv"
)

func featuresCommand() *cli.Command {
	return &cli.Command{
		Name:  "features",
		Usage: "show the OCI features this runtime supports, as JSON",
		Description: `The features command prints the runtime-spec "features" document: the
	spec versions, hooks, mount options, namespaces and capabilities this
	runtime accepts. Container engines read it to decide what to ask for.`,
		Action: func(ctx *cli.Context) error {
			if err := checkArgs(ctx, 0, 0); err != nil {
				return err
			}
			f := specconv.Features()
			if f.Annotations == nil {
				f.Annotations = map[string]string{}
			}
			f.Annotations["org.nanobox.runtime.version"] = version
			enc := json.NewEncoder(ctx.App.Writer)
			enc.SetIndent("", "    ")
			return enc.Encode(f)
		},
	}
}
