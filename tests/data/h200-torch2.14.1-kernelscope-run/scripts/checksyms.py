"""Which of the undefined symbols of torch 2.14.1's libs (symbols.json: name -> soname) the machine's libs lack.
Writes the list of missing names to argv[1] (one a line)."""
import ctypes, glob, json, os, site, sys
syms = json.load(open(os.path.join(os.path.dirname(__file__) or ".", "symbols.json")))
sp = [p for p in site.getsitepackages() if os.path.isdir(os.path.join(p, "nvidia"))]
roots = [os.path.join(p, "nvidia") for p in sp] + ["/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu"]
order = ["libcudart.so.13", "libnvJitLink.so.13", "libcublasLt.so.13", "libcublas.so.13", "libcusparse.so.12", "libcusolver.so.12",
         "libcufft.so.12", "libcurand.so.10", "libcupti.so.13", "libnvrtc.so.13", "libcufile.so.0", "libcudnn.so.9",
         "libcusparseLt.so.0", "libnccl.so.2", "libnvshmem_host.so.3"]
libs = {}
for so in order:
    path = None
    for r in roots:
        g = glob.glob(os.path.join(r, "**", so), recursive=True)
        if g: path = g[0]; break
    try:
        libs[so] = ctypes.CDLL(path or so, mode=ctypes.RTLD_GLOBAL); print("lib", so, path)
    except OSError as e:
        print("lib", so, "NOT LOADED", e)
missing = []
for s, so in sorted(syms.items()):
    lib = libs.get(so)
    try:
        if lib is None: raise AttributeError
        getattr(lib, s)
    except AttributeError:
        missing.append(s)
by = {}
for s in missing: by.setdefault(syms[s], []).append(s)
for so, ss in by.items(): print("missing", so, len(ss), ss)
open(sys.argv[1], "w").write("\n".join(missing) + ("\n" if missing else ""))
try:
    import importlib.metadata as md
    for d in ("nvidia-nccl-cu13", "nvidia-cudnn-cu13", "nvidia-nvshmem-cu13", "nvidia-cusparselt-cu13", "cuda-toolkit", "triton", "cuda-bindings", "nvidia-cublas", "nvidia-cuda-runtime"):
        try: print("dist", d, md.version(d))
        except Exception: print("dist", d, "absent")
except Exception as e: print(e)
