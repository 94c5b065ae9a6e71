#!/bin/sh
# usage: filecheck.sh SOURCE PREFIX OUTPUT — see filecheck.py
exec python3 "$(dirname "$0")/filecheck.py" "$@"
