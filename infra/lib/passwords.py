"""HDInsight's credential rules, checked before a 30-minute deployment fails on them.

The rules are the ones Microsoft's HDInsight Kafka quickstart template states for its
parameters (azure-quickstart-templates, quickstarts/microsoft.hdinsight, clusterLoginPassword
and sshPassword): the cluster login password has at least 10 characters with a digit, an
upper-case and a lower-case letter and a non-alphanumeric character other than ' " \\ ] .,
and must not contain 3 consecutive characters of the cluster login or SSH user name; the SSH
password has 6-72 characters with a digit, an upper-case and a lower-case letter, and must not
contain 3 consecutive characters of the cluster login name.
"""

from __future__ import annotations

FORBIDDEN_SPECIALS = "'\"\\]."


def _shares_three_characters(password: str, name: str) -> bool:
    lowered = password.lower()
    name = name.lower()
    return any(name[i : i + 3] in lowered for i in range(len(name) - 2))


def _missing_classes(password: str) -> list[str]:
    """The character classes both HDInsight passwords need and `password` lacks."""
    classes = (("digit", str.isdigit), ("upper-case letter", str.isupper), ("lower-case letter", str.islower))
    return [f"has no {name}" for name, test in classes if not any(test(c) for c in password)]


def cluster_password_problems(password: str, login_user: str, ssh_user: str) -> list[str]:
    """What is wrong with the cluster login (Ambari, gateway) password; empty when it is fine."""
    problems = ["has fewer than 10 characters"] if len(password) < 10 else []
    problems += _missing_classes(password)
    if not any(not c.isalnum() for c in password):
        problems.append("has no non-alphanumeric character")
    bad = sorted({c for c in password if c in FORBIDDEN_SPECIALS})
    if bad:
        problems.append(f"contains {' '.join(bad)} (HDInsight rejects ' \" \\ ] and .)")
    for user in (login_user, ssh_user):
        if _shares_three_characters(password, user):
            problems.append(f"contains 3 consecutive characters of the user name {user!r}")
    return problems


def ssh_password_problems(password: str, login_user: str) -> list[str]:
    """What is wrong with the SSH password; empty when it is fine."""
    problems = [] if 6 <= len(password) <= 72 else ["must have 6-72 characters"]
    problems += _missing_classes(password)
    if _shares_three_characters(password, login_user):
        problems.append(f"contains 3 consecutive characters of the cluster login name {login_user!r}")
    return problems
