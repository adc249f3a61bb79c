#!/bin/bash
# Draws every figure under jobs/figures/ from the archives of the figure jobs (jobs/*.toml; the
# table below is the one list of which figure comes from which job and plot options).
#
# usage: bash jobs/figures/regenerate.sh ARCHIVE_DIR [--run] [--full] [--ranks N] [--out DIR]
#                                        [--only STEM[,STEM...]]
#   ARCHIVE_DIR  holds <job name>.h5 for each job (e.g. fig2_population.h5); created if missing
#   --run        first computes the archives that are missing (mpirun -n N slr-sweep run JOB -o ...),
#                `resume`s the ones that are incomplete, and logs to ARCHIVE_DIR/<job>.log
#   --full       also the full-size figures (jobs/figures/full/: hours on 2 cores; see the README)
#   --ranks N    MPI ranks for --run (default 2: rank 0 also works)
#   --out DIR    draw into DIR (same subfolders) instead of jobs/figures, e.g. to compare
#   --only S     only the figures with these file stems (the third column of the table below)
# The binary is $SLR_SWEEP, else build/bin/slr-sweep. A figure whose archives are missing is
# skipped with a note, and the exit status is then 1; bad input exits 2 as slr-sweep does.
set -u
cd "$(dirname "$0")/../.."
usage() { sed -n '4,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
dir=$1; shift
run=0; full=0; ranks=2; out=jobs/figures; only=
while [ $# -gt 0 ]; do
  case $1 in
    --run) run=1 ;;
    --full) full=1 ;;
    --ranks) ranks=${2:?--ranks needs a number}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    --only) only=${2:?--only needs file stems}; shift ;;
    *) echo "regenerate.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
slr=${SLR_SWEEP:-build/bin/slr-sweep}
[ -x "$slr" ] || { echo "regenerate.sh: no slr-sweep binary at $slr (build first, or set SLR_SWEEP)" >&2; exit 2; }
mkdir -p "$dir"
missing=0

# size | output dir | file stem | formats | jobs (space-separated) | plot options
FIGURES=(
  "small|$out|fig2_population|png,svg|jobs/fig2_population.toml|--figure population"
  "small|$out/paper|fig2_population|png,pdf|jobs/fig2_population.toml|--figure population --style paper-wide"
  "small|$out|fig3_finite_alpha|png,svg|jobs/fig3_theory_small.toml jobs/fig3_erm_small.toml|--figure finite-alpha"
  "small|$out/paper|fig3_finite_alpha|png,pdf|jobs/fig3_theory_small.toml jobs/fig3_erm_small.toml|--figure finite-alpha --style paper"
  "small|$out|fig3_by_r|png|jobs/fig3_theory_small.toml jobs/fig3_erm_small.toml|--figure finite-alpha --series r_k --xscale log"
  "small|$out|fig3_panels|png|jobs/fig3_panels_theory_small.toml jobs/fig3_panels_erm_small.toml|--figure finite-alpha --xscale log"
  "small|$out|fig4_order_parameters|png,svg|jobs/fig4_gradient_flow_small.toml|--figure order-parameters"
  "small|$out|fig4_trajectory|png|jobs/fig4_gradient_flow_small.toml|--figure trajectory"
  "small|$out|fig4_panels|png|jobs/fig4_panels_small.toml|--figure order-parameters"
  "small|$out|fig5_mismatched|png|jobs/fig5_mismatched_small.toml|--figure mismatched"
  "small|$out|fig5_fixed_students|png,svg|jobs/fig5_fixed_students.toml|--figure mismatched"
  "small|$out/tied|tied_fig1_small|png,svg|jobs/tied_fig1_small.toml|--figure all"
  "small|$out/tied|tied_factorised_vs_direct_small-tied-factorised-vs-direct|png,svg|jobs/tied_factorised_vs_direct_small.toml|--figure tied-factorised-vs-direct"
  "small|$out/tied|tied_tokens_temperature|png,svg|jobs/tied_tokens_temperature.toml|--figure tied-tokens-temperature"
  "full|$out/tied|tied_fig1-tied-learning-curve|png,svg|jobs/tied_fig1.toml|--figure tied-learning-curve"
  "full|$out/tied|tied_fig1-tied-rank|png,svg|jobs/tied_fig1.toml|--figure tied-rank"
  "full|$out/tied|tied_fig1-tied-spectra|png,svg|jobs/tied_fig1_spectra.toml|--figure tied-spectra"
  "full|$out/tied|tied_factorised_vs_direct|png,svg|jobs/tied_factorised_vs_direct.toml|--figure tied-factorised-vs-direct"
  "full|$out/tied|tied_training_error|png,svg|jobs/tied_training_error.toml jobs/tied_thresholds.toml|--figure tied-training-error"
  "full|$out/full|fig3_theory_full|png|jobs/fig3_theory.toml tests/bench/fig3_erm_alpha8_slice.toml tests/bench/fig3_erm_alpha4_slice.toml|--figure finite-alpha --xscale log"
  "full|$out/full|fig4_order_parameters_full|png|jobs/fig4_gradient_flow.toml|--figure order-parameters"
  "full|$out/full|fig4_trajectory_full|png|jobs/fig4_gradient_flow.toml|--figure trajectory"
  "full|$out/full|fig5_mismatched_full|png|jobs/fig5_mismatched.toml|--figure mismatched"
  "full|$out/paper|fig5_mismatched|png,pdf|jobs/fig5_mismatched.toml|--figure mismatched --style paper-wide"
)

for stem in ${only//,/ }; do  # a stem that names no figure is a typing error, not an empty run
  printf '%s\n' "${FIGURES[@]}" | cut -d'|' -f3 | grep -qx "$stem" ||
    { echo "regenerate.sh: --only: no figure has the file stem '$stem'" >&2; exit 2; }
done

archive_of() { echo "$dir/$(basename "$1" .toml).h5"; }

compute() {  # compute (or complete) the archive of one job
  local job=$1 archive; archive=$(archive_of "$1")
  local log=${archive%.h5}.log
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # only matters as root
  if [ -e "$archive" ]; then
    "$slr" status "$archive" --json 2>/dev/null | /usr/bin/python3 -c \
      'import json, sys; s = json.load(sys.stdin); sys.exit(s["points_done"] != s["points_total"])' && return 0
    echo "resume $archive" >&2
    mpirun --oversubscribe -n "$ranks" "$slr" resume "$archive" >>"$log" 2>&1
  else
    echo "run $job -> $archive" >&2
    mpirun --oversubscribe -n "$ranks" "$slr" run "$job" -o "$archive" >>"$log" 2>&1
  fi
}

for entry in "${FIGURES[@]}"; do
  IFS='|' read -r size folder stem formats jobs options <<<"$entry"
  [ "$size" = full ] && [ $full = 0 ] && continue
  [ -n "$only" ] && [[ ",$only," != *",$stem,"* ]] && continue
  archives=()
  for job in $jobs; do
    [ $run = 1 ] && compute "$job"
    [ -e "$(archive_of "$job")" ] && archives+=("$(archive_of "$job")")
  done
  # Fig 3 at full size draws the ERM slices that exist; every other figure needs all its archives.
  if [ ${#archives[@]} = 0 ] || { [ "$stem" != fig3_theory_full ] && [ ${#archives[@]} != $(wc -w <<<"$jobs") ]; }; then
    echo "regenerate.sh: skipped $folder/$stem: missing archive(s) of $jobs in $dir (use --run)" >&2
    missing=1
    continue
  fi
  # With --figure all the files are <stem>-<figure>.<format>.
  # shellcheck disable=SC2086  # options are words
  "$slr" plot "${archives[@]}" $options -o "$folder" --name "$stem" --formats "$formats" || exit $?
done
exit $missing
