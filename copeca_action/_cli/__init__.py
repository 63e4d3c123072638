"""Subcommands of the `copeca-action` CLI; each module registers one verb."""
