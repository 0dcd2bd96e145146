"""Dynamic providers: plain inputs in, plain outputs out, API clients built inside each method.

Pulumi pickles these classes with dill into the stack state and runs them in a separate
process, so they hold no clients, sessions or credentials between calls, and every base URL
is an input so tests can point them at loopback stand-ins.
"""
