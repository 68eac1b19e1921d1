#!/usr/bin/env bash
# run_fuzz.sh [MINUTES]: the fuzz campaign from the bundle (the same as
# `./qcheck fuzz MINUTES` here; see run_campaign.sh for the options).
exec "$(dirname "${BASH_SOURCE[0]}")/qcheck" fuzz "$@"
