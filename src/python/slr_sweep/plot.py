"""python3 -m slr_sweep.plot ARCHIVE [ARCHIVE...] --figure NAME -o OUTDIR: the command behind
`slr-sweep plot`. Several archives are drawn together (their rows concatenated). The figure names
are those of figures.FIGURES (the only list: `slr-sweep plot` forwards --figure unchecked), or
"all"; `python3 -m slr_sweep.plot --list-figures` prints them, one per line.
Exit codes: 0 ok, 2 bad input (an unknown figure, no data for the figure), 3 a missing Python package."""
import argparse
import sys

PROG = "slr-sweep plot"


def main(argv=None):
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    parser.add_argument("archive", nargs="*")
    parser.add_argument("--figure", help="a name of --list-figures, or all")
    parser.add_argument("--list-figures", action="store_true", help="print the figure names, one per line, and exit")
    parser.add_argument("-o", "--output")
    parser.add_argument("--formats", default="png,svg")
    parser.add_argument("--point-ids", help="file with the point ids to plot, one per line")
    parser.add_argument("--style", default="screen",
                        help="screen (4.6 x 3.6 in panels), paper (one column of a two-column article: 3.4 in wide, "
                             "8 pt text, 300 dpi) or paper-wide (7 in wide)")
    parser.add_argument("--xscale", default="auto",
                        help="alpha axes: auto (log when alpha spans more than a factor 20), log or linear")
    parser.add_argument("--series", help="a parameter whose values split each activation's curves into series "
                                         "(population, finite-alpha, trajectory), e.g. r_k or L")
    parser.add_argument("--name", help="file name stem (default: <job name>-<figure>); with --figure all, "
                                       "<name>-<figure>")
    args = parser.parse_args(argv)
    if not args.list_figures:
        missing = [name for name, given in (("archive", args.archive), ("--figure", args.figure),
                                            ("-o/--output", args.output)) if not given]
        if missing:
            parser.error("the following arguments are required: " + ", ".join(missing))
    try:
        import h5py  # noqa: F401
        import matplotlib  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print(f"{PROG}: error: Python package {e.name!r} is missing for {sys.executable} "
              "(Debian: apt-get install python3-numpy python3-h5py python3-matplotlib; "
              "or set SLR_PYTHON to an interpreter that has them)", file=sys.stderr)
        return 3
    from . import figures
    from .archive import attributes, load_columns

    if args.list_figures:
        for name in figures.FIGURES:
            print(name)
        return 0
    for flag, value, known in (("--style", args.style, figures.STYLES), ("--xscale", args.xscale, figures.XSCALES)):
        if value not in known:
            print(f"{PROG}: error: {flag}: unknown value '{value}' (expected {', '.join(known)})", file=sys.stderr)
            return 2
    if args.figure != "all" and args.figure not in figures.FIGURES:
        print(f"{PROG}: error: --figure: unknown figure '{args.figure}' (expected "
              f"{', '.join(figures.FIGURES)} or all)", file=sys.stderr)
        return 2

    point_ids = None
    if args.point_ids:
        with open(args.point_ids) as f:
            point_ids = [int(line) for line in f if line.strip()]
    try:
        cols = load_columns(list(args.archive), point_ids)
    except (OSError, ValueError, KeyError) as e:
        print(f"{PROG}: error: {', '.join(args.archive)}: cannot read the archive: {e}", file=sys.stderr)
        return 2
    if args.series is not None and args.series not in cols:
        print(f"{PROG}: error: --series: '{args.series}' is not a parameter of {', '.join(args.archive)} "
              f"(expected one of {', '.join(sorted(k for k in cols if not k.startswith('order_parameters')))})",
              file=sys.stderr)
        return 2
    formats = [f for f in args.formats.split(",") if f]
    names = list(figures.FIGURES) if args.figure == "all" else [args.figure]
    written, missing = [], []
    try:
        job = attributes(args.archive[0]).get("job_name", "") or "slr-sweep"
    except (OSError, KeyError):
        job = "slr-sweep"
    for name in names:
        if args.name:
            stem = args.name if len(names) == 1 else f"{args.name}-{name}"
        else:
            stem = f"{job}-{name}"
        try:
            written += figures.draw(cols, name, args.output, formats, name=stem, style=args.style,
                                    xscale=args.xscale, series=args.series)
        except figures.NoData as e:
            missing.append(str(e))

    for path in written:
        print(path)
    if not written:
        print(f"{PROG}: error: --figure: " + "; ".join(missing), file=sys.stderr)
        return 2
    for m in missing:
        print(f"{PROG}: note: skipped {m}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
