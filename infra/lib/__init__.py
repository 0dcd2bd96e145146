"""Pure helpers for the Pulumi program: no Pulumi, no network, unit-tested on their own."""
