/**
 * The Python side of a run: fresh globals each time, the directories as
 * variables and in `os.environ`, `sys.argv`, and the one-line error the agent
 * reports. Convenience only: the boundary is the worker's permissions.
 *
 * @module
 */

/** Imported before the memory snapshot, so they cost nothing at run time. */
export const WARM_MODULES = [
  "json",
  "csv",
  "math",
  "statistics",
  "sqlite3",
  "re",
  "os",
  "sys",
  "io",
  "datetime",
  "collections",
  "itertools",
  "traceback",
  "pathlib",
  "glob",
  "random",
  "string",
  "textwrap",
  "ast",
];

/**
 * Run once when a process starts, before it reports ready: each process runs
 * one piece of code, so without this every run would be the first through
 * the interpreter's parser, csv, json and host file system (V8 compiles
 * WebAssembly functions on first call). The file it writes in the still
 * unused run directory is removed; its output is discarded.
 */
export const WARM_UP = String.raw`
import csv, io, json, math, os, statistics
rows = list(csv.DictReader(io.StringIO("bpm,x\nA,0.1\nB,-0.2\nC,0.3\n")))
xs = [float(r["x"]) for r in rows]
out = {"n": len(xs), "rms": math.sqrt(sum(x * x for x in xs) / len(xs)),
       "sd": statistics.pstdev(xs), "worst": max(rows, key=lambda r: abs(float(r["x"])))["bpm"]}
path = WORK_DIR + "/.warm-up.json"
json.dump(out, open(path, "w"))
print(json.load(open(path))["n"], round(out["rms"], 4))
os.remove(path)
`;

export const PRELUDE = String.raw`
import builtins, json, os, sys, traceback

_accel = {}

def _accel_setup(config_json):
    config = json.loads(config_json)
    _accel.update(config)
    data_dirs = config["data_dirs"]
    os.environ.clear()
    os.environ.update({
        "HOME": config["work_dir"],
        "WORK_DIR": config["work_dir"],
        "DATA_DIR": data_dirs[0] if data_dirs else "",
        "DATA_DIRS": os.pathsep.join(data_dirs),
        "SCRIPTS_DIR": config["scripts_dir"] or "",
    })
    _accel["modules"] = set(sys.modules)
    _accel["builtins"] = dict(builtins.__dict__)

def _accel_run(code, argv_json):
    """Runs code in fresh globals; returns None or the error's last line."""
    data_dirs = _accel["data_dirs"]
    namespace = {
        "__name__": "__main__",
        "__builtins__": builtins,
        "DATA_DIR": data_dirs[0] if data_dirs else None,
        "DATA_DIRS": list(data_dirs),
        "SCRIPTS_DIR": _accel["scripts_dir"],
        "WORK_DIR": _accel["work_dir"],
    }
    sys.argv = json.loads(argv_json)
    os.chdir(_accel["work_dir"])
    try:
        exec(compile(code, sys.argv[0] if sys.argv else "<code>", "exec"), namespace)
        return None
    except SystemExit as e:
        if e.code in (None, 0):
            return None
        return "SystemExit: " + str(e.code)
    except BaseException as e:
        tb = traceback.format_exception(type(e), e, e.__traceback__)
        # Drop the frame of this function: the operator's code starts below it.
        sys.stderr.write("".join(tb[:1] + tb[2:]))
        return (type(e).__name__ + ": " + str(e)).strip()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        namespace.clear()
        # Modules the code imported go too, so one run cannot patch the next.
        # Installed packages (under /lib) stay loaded: importing them is costly.
        for name in set(sys.modules) - _accel["modules"]:
            if not (getattr(sys.modules.get(name), "__file__", None) or "").startswith("/lib/"):
                del sys.modules[name]
        # Builtins are shared by every namespace: put back what the code replaced.
        builtins.__dict__.clear()
        builtins.__dict__.update(_accel["builtins"])
        sys.argv = []
        os.chdir("/")
`;
