#!/bin/sh
# The fuzz suite with many more examples than CI runs (tests/test_fuzz_parsers.py, profile "long").
cd "$(dirname "$0")/../.." && DOC4LLM_FUZZ_PROFILE=long exec python -m pytest tests/test_fuzz_parsers.py -q "$@"
