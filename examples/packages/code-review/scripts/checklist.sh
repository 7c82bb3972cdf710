#!/bin/sh
# Prints the review checklist.
cat <<'LIST'
- Does every new branch have a test?
- Are errors reported with context?
- Is anything user-facing undocumented?
LIST
