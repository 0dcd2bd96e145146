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


def cluster_password_problems(password: str, login_user: str, ssh_user: str) -> list[str]:
    """What is wrong with the cluster login (Ambari, gateway) password; empty when it is fine."""
    problems = []
    if len(password) < 10:
        problems.append("has fewer than 10 characters")
    if not any(c.isdigit() for c in password):
        problems.append("has no digit")
    if not any(c.isupper() for c in password):
        problems.append("has no upper-case letter")
    if not any(c.islower() for c in password):
        problems.append("has no lower-case letter")
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
    problems = []
    if not 6 <= len(password) <= 72:
        problems.append("must have 6-72 characters")
    if not any(c.isdigit() for c in password):
        problems.append("has no digit")
    if not any(c.isupper() for c in password):
        problems.append("has no upper-case letter")
    if not any(c.islower() for c in password):
        problems.append("has no lower-case letter")
    if _shares_three_characters(password, login_user):
        problems.append(f"contains 3 consecutive characters of the cluster login name {login_user!r}")
    return problems
