#!/usr/bin/env bash
# Fails when the tree holds a secret that is not in .secrets.baseline as a reviewed false
# positive. detect-secrets rescans into a copy of the baseline: known findings keep their
# review (matched by hash, so moved lines do not matter), new ones arrive unreviewed.
# To accept a new false positive: .venv/bin/detect-secrets scan --baseline .secrets.baseline,
# then .venv/bin/detect-secrets audit .secrets.baseline.
set -euo pipefail
cd "$(dirname "$0")/.."
copy=.cache/secrets.baseline
mkdir -p .cache
cp .secrets.baseline "$copy"
.venv/bin/detect-secrets scan --all-files --exclude-files '(^|/)(\.venv|\.cache|\.state|out|\.git|\.pytest_cache|\.ruff_cache|\.import_linter_cache|\.hypothesis|__pycache__|[^/]*\.egg-info)/|(^|/)\.secrets\.baseline$' --baseline "$copy"
.venv/bin/python - "$copy" <<'PY'
import json, sys
found = [(path, item["line_number"], item["type"])
         for path, items in json.load(open(sys.argv[1]))["results"].items()
         for item in items if item.get("is_secret") is not False]
for path, line, kind in found:
    print(f"possible secret: {path}:{line} ({kind})")
if found:
    print("remove it and load it from the environment or config, or review it: see scripts/check-secrets.sh")
    sys.exit(1)
print("secret scan: nothing new (detect-secrets, baseline .secrets.baseline)")
PY
