/* The per-launch loops of the analysis in C (optional: kernelscope/analysis/kernels.py and launch.py keep the same
 * loops in Python, and take them whenever this module is not built or declines).
 *
 * Each function gives exactly what its Python loop gives (the same objects where the loop passes objects on, equal
 * values of the same types where it makes them, the same float sums bit for bit: the same additions in the same
 * order), or None before it changes anything the caller sees (it "declines") when the input is not what it vouches
 * for: a record of another type than the trace's own, a time that is not a float, a NaN (Python's comparisons of
 * NaN and its tuple comparisons, which test identity first, are not worth copying). tests/test_fastan.py holds both
 * paths to the same results.
 *
 * The records are msgspec Structs (trace.GpuEvent, analysis.kernels.KernelInstance, ...): their fields are read at
 * the offsets of their member descriptors, checked at setup(), on records whose type is exactly that type.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>

#define FIELD(o, off) (*(PyObject **)((char *)(o) + (off)))

static PyTypeObject *Gpu_t, *Runtime_t, *Instance_t, *Cpu_t;
/* GpuEvent */
static Py_ssize_t g_name, g_cat, g_ts, g_dur, g_corr, g_ext, g_stream;
/* RuntimeEvent */
static Py_ssize_t r_name, r_ts, r_dur, r_corr;
/* CpuEvent */
static Py_ssize_t c_name, c_cat, c_ts, c_dur, c_tid, c_ext;
/* KernelInstance */
static Py_ssize_t k_name, k_ts, k_dur, k_iteration, k_is_memop;
static PyObject *s_memset, *s_memcpy, *s_memset_word, *s_cpu_op, *s_user_annotation;

static int offset_of(PyTypeObject *tp, const char *field, Py_ssize_t *out) {
    PyObject *d = PyDict_GetItemString(tp->tp_dict, field); /* borrowed */
    if (d == NULL || !PyObject_TypeCheck(d, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "_fastan: %s.%s is not a slot field", tp->tp_name, field);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type != T_OBJECT_EX && m->type != T_OBJECT) {
        PyErr_Format(PyExc_TypeError, "_fastan: %s.%s is not an object field", tp->tp_name, field);
        return -1;
    }
    *out = m->offset;
    return 0;
}

/* setup(GpuEvent, RuntimeEvent, CpuEvent, KernelInstance) */
static PyObject *setup(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *g, *r, *c, *k;
    if (!PyArg_ParseTuple(args, "O!O!O!O!", &PyType_Type, &g, &PyType_Type, &r, &PyType_Type, &c, &PyType_Type, &k))
        return NULL;
    PyTypeObject *gt = (PyTypeObject *)g, *rt = (PyTypeObject *)r, *ct = (PyTypeObject *)c, *kt = (PyTypeObject *)k;
    if (offset_of(ct, "name", &c_name) < 0 || offset_of(ct, "cat", &c_cat) < 0 || offset_of(ct, "ts", &c_ts) < 0 ||
        offset_of(ct, "dur", &c_dur) < 0 || offset_of(ct, "tid", &c_tid) < 0 ||
        offset_of(ct, "external_id", &c_ext) < 0)
        return NULL;
    if (offset_of(gt, "name", &g_name) < 0 || offset_of(gt, "cat", &g_cat) < 0 || offset_of(gt, "ts", &g_ts) < 0 ||
        offset_of(gt, "dur", &g_dur) < 0 || offset_of(gt, "correlation", &g_corr) < 0 ||
        offset_of(gt, "external_id", &g_ext) < 0 || offset_of(gt, "stream", &g_stream) < 0)
        return NULL;
    if (offset_of(rt, "name", &r_name) < 0 || offset_of(rt, "ts", &r_ts) < 0 || offset_of(rt, "dur", &r_dur) < 0 ||
        offset_of(rt, "correlation", &r_corr) < 0)
        return NULL;
    if (offset_of(kt, "name", &k_name) < 0 || offset_of(kt, "ts", &k_ts) < 0 || offset_of(kt, "dur", &k_dur) < 0 ||
        offset_of(kt, "iteration", &k_iteration) < 0 || offset_of(kt, "is_memop", &k_is_memop) < 0)
        return NULL;
    if (s_memset == NULL) {
        if ((s_memset = PyUnicode_InternFromString("memset")) == NULL) return NULL;
        if ((s_memcpy = PyUnicode_InternFromString("memcpy")) == NULL) return NULL;
        s_memset_word = s_memset;
        if ((s_cpu_op = PyUnicode_InternFromString("cpu_op")) == NULL) return NULL;
        if ((s_user_annotation = PyUnicode_InternFromString("user_annotation")) == NULL) return NULL;
    }
    Py_INCREF(c);
    Py_XSETREF(Cpu_t, ct);
    Py_INCREF(g);
    Py_INCREF(r);
    Py_INCREF(k);
    Py_XSETREF(Gpu_t, gt);
    Py_XSETREF(Runtime_t, rt);
    Py_XSETREF(Instance_t, kt);
    Py_RETURN_NONE;
}

/* A float field (not NaN) as a double; 0, or -1 for what this module does not vouch for. */
static inline int finite_or_inf(PyObject *o, double *out) {
    if (o == NULL || !PyFloat_CheckExact(o)) return -1;
    double d = PyFloat_AS_DOUBLE(o);
    if (d != d) return -1;
    *out = d;
    return 0;
}

/* The doubles of a list of floats (none NaN); NULL with no error set: declined. */
static double *doubles_of(PyObject *list, Py_ssize_t n) {
    double *out = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(double));
    if (out == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (finite_or_inf(PyList_GET_ITEM(list, i), &out[i]) < 0) {
            PyMem_Free(out);
            return NULL;
        }
    }
    return out;
}

/* bisect.bisect_right */
static inline Py_ssize_t bisect_right(const double *a, Py_ssize_t n, double x) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (x < a[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

#define DECLINE -2

/* ---- small open-addressing tables (no Python hashing, no Python objects made for a lookup) ---- */

/* int64 -> a position (1 + an index into the caller's array: 0 is none); a later put of a key replaces the value, as
 * a dict's does. Ids (correlations, external ids) mostly count up from some start: keys within 16 times their number
 * (64 bytes a key apart) go to an array indexed by key - lo (read in order: no cache miss per lookup), others to a
 * hash table. */
typedef struct {
    int64_t *keys;   /* hashed only */
    uint32_t *vals;  /* 0: an empty slot */
    size_t mask;     /* hashed: slots - 1 */
    int64_t lo, n;   /* dense: vals[key - lo] for lo <= key < lo + n */
    int dense;
} IntMap;

static inline size_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

/* For n keys between lo and hi. */
static int intmap_init(IntMap *m, Py_ssize_t n, int64_t lo, int64_t hi) {
    memset(m, 0, sizeof *m);
    if (n > 0 && hi >= lo && (uint64_t)hi - (uint64_t)lo < (uint64_t)n * 16 + 4096) {
        m->dense = 1;
        m->lo = lo;
        m->n = hi - lo + 1;
        m->vals = PyMem_Calloc((size_t)m->n, sizeof(uint32_t));
        if (m->vals == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        return 0;
    }
    size_t cap = 16;
    while (cap < (size_t)n * 2) cap <<= 1;
    m->keys = PyMem_Malloc(cap * sizeof(int64_t));
    m->vals = PyMem_Calloc(cap, sizeof(uint32_t));
    m->mask = cap - 1;
    if (m->keys == NULL || m->vals == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void intmap_free(IntMap *m) {
    PyMem_Free(m->keys);
    PyMem_Free(m->vals);
}

static inline void intmap_put(IntMap *m, int64_t k, uint32_t v) {
    if (m->dense) {
        m->vals[k - m->lo] = v; /* (init saw every key: within range) */
        return;
    }
    size_t i = mix64((uint64_t)k) & m->mask;
    while (m->vals[i] != 0 && m->keys[i] != k) i = (i + 1) & m->mask;
    m->keys[i] = k;
    m->vals[i] = v;
}

static inline uint32_t intmap_get(const IntMap *m, int64_t k) {
    if (m->dense) return k >= m->lo && k - m->lo < m->n ? m->vals[k - m->lo] : 0;
    size_t i = mix64((uint64_t)k) & m->mask;
    while (m->vals[i] != 0) {
        if (m->keys[i] == k) return m->vals[i];
        i = (i + 1) & m->mask;
    }
    return 0;
}

/* An exact int that fits int64; -1 otherwise (no error set). */
static inline int as_int64(PyObject *o, int64_t *out) {
    if (!PyLong_CheckExact(o)) return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    *out = v;
    return 0;
}

/* (name, what its launching op says) by identity -> (category, backend) (a strong reference): the classes dict
 * is asked once per pair of objects. The reader interns names, and _launching_ops makes one tuple per op name. */
typedef struct {
    PyObject **name, **by, **cls;
    size_t mask, used;
} PairCache;

static int pairs_init(PairCache *c, size_t cap) {
    c->name = PyMem_Calloc(cap, sizeof(PyObject *));
    c->by = PyMem_Calloc(cap, sizeof(PyObject *));
    c->cls = PyMem_Calloc(cap, sizeof(PyObject *));
    c->mask = cap - 1;
    c->used = 0;
    if (c->name == NULL || c->by == NULL || c->cls == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void pairs_free(PairCache *c) {
    if (c->cls != NULL) {
        for (size_t i = 0; i <= c->mask; i++) Py_XDECREF(c->cls[i]);
    }
    PyMem_Free(c->name);
    PyMem_Free(c->by);
    PyMem_Free(c->cls);
}

static inline size_t pair_slot(const PairCache *c, PyObject *name, PyObject *by) {
    size_t i = mix64((uint64_t)(uintptr_t)name * 31u + (uint64_t)(uintptr_t)by) & c->mask;
    while (c->cls[i] != NULL && (c->name[i] != name || c->by[i] != by)) i = (i + 1) & c->mask;
    return i;
}

static int pairs_put(PairCache *c, PyObject *name, PyObject *by, PyObject *cls) {
    if ((c->used + 1) * 2 > c->mask + 1) { /* grow: rehash into twice the slots */
        PairCache bigger;
        if (pairs_init(&bigger, (c->mask + 1) * 2) < 0) return -1;
        for (size_t i = 0; i <= c->mask; i++) {
            if (c->cls[i] == NULL) continue;
            size_t j = pair_slot(&bigger, c->name[i], c->by[i]);
            bigger.name[j] = c->name[i];
            bigger.by[j] = c->by[i];
            bigger.cls[j] = c->cls[i]; /* (the reference moves) */
            bigger.used++;
        }
        PyMem_Free(c->name);
        PyMem_Free(c->by);
        PyMem_Free(c->cls);
        *c = bigger;
    }
    size_t i = pair_slot(c, name, by);
    c->name[i] = name;
    c->by[i] = by;
    c->cls[i] = Py_NewRef(cls);
    c->used++;
    return 0;
}

/* The (category, backend) of a kernel key, from the classes dict (filled in by classify_key for a new key); a new
 * reference. */
static PyObject *class_of(PyObject *classes, PyObject *classify_key, PyObject *name, PyObject *by) {
    PyObject *key = by ? PyTuple_Pack(2, name, by) : Py_NewRef(name);
    if (key == NULL) return NULL;
    PyObject *cls = PyDict_GetItemWithError(classes, key);
    if (cls != NULL) {
        Py_INCREF(cls);
    } else if (!PyErr_Occurred()) {
        cls = PyObject_CallFunctionObjArgs(classify_key, name, by ? by : Py_None, NULL);
        if (cls != NULL && PyDict_SetItem(classes, key, cls) < 0) Py_CLEAR(cls);
    }
    Py_DECREF(key);
    if (cls != NULL && (!PyTuple_Check(cls) || PyTuple_GET_SIZE(cls) != 2)) {
        PyErr_SetString(PyExc_TypeError, "_fastan: a kernel's class is not a (category, backend) pair");
        Py_CLEAR(cls);
    }
    return cls;
}

/* kernels._gpu_instances: the loop over the GPU records, from the launch times by correlation on. */
static int instances_into(PyObject *out, PyObject *const *gpu, Py_ssize_t n_gpu, PyObject *const *rt,
                          Py_ssize_t n_rt, PyObject *said, PyObject *classes, PyObject *classify_key,
                          const double *starts, const double *ends, Py_ssize_t nw, PyObject *memop_cats,
                          int *in_order_out) {
    int rc = -1;
    IntMap ts_of_corr, said_of;
    memset(&ts_of_corr, 0, sizeof ts_of_corr);
    memset(&said_of, 0, sizeof said_of);
    PairCache pairs = {NULL, NULL, NULL, 0, 0};
    PyObject **said_vals = NULL;
    if (pairs_init(&pairs, 256) < 0) goto out;
    /* the runtime records' correlations (checked, and their range), then the table */
    int64_t lo_c = INT64_MAX, hi_c = INT64_MIN, lo_e = INT64_MAX, hi_e = INT64_MIN;
    Py_ssize_t n_corr = 0;
    for (Py_ssize_t i = 0; i < n_rt; i++) {
        PyObject *r = rt[i];
        if (Py_TYPE(r) != Runtime_t) {
            rc = DECLINE;
            goto out;
        }
        PyObject *corr = FIELD(r, r_corr), *ts = FIELD(r, r_ts);
        int64_t c;
        if (corr == NULL || ts == NULL || (corr != Py_None && as_int64(corr, &c) < 0)) {
            rc = DECLINE;
            goto out;
        }
        if (corr != Py_None) {
            n_corr++;
            if (c < lo_c) lo_c = c;
            if (c > hi_c) hi_c = c;
        }
    }
    if (n_rt >= (Py_ssize_t)UINT32_MAX || PyDict_GET_SIZE(said) >= (Py_ssize_t)UINT32_MAX) {
        rc = DECLINE;
        goto out;
    }
    if (intmap_init(&ts_of_corr, n_corr, lo_c, hi_c) < 0) goto out;
    for (Py_ssize_t i = 0; i < n_rt; i++) {
        PyObject *corr = FIELD(rt[i], r_corr);
        int64_t c;
        if (corr != Py_None && as_int64(corr, &c) == 0) intmap_put(&ts_of_corr, c, (uint32_t)(i + 1));
    }
    /* what the launching ops say, in the dict's order: said_vals[position - 1] */
    said_vals = PyMem_Malloc(((size_t)PyDict_GET_SIZE(said) + 1) * sizeof(PyObject *));
    if (said_vals == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    {
        Py_ssize_t pos = 0, j = 0;
        PyObject *k, *v;
        while (PyDict_Next(said, &pos, &k, &v)) {
            int64_t e;
            if (as_int64(k, &e) < 0) {
                rc = DECLINE;
                goto out;
            }
            if (e < lo_e) lo_e = e;
            if (e > hi_e) hi_e = e;
            said_vals[j++] = v;
        }
        if (intmap_init(&said_of, PyDict_GET_SIZE(said), lo_e, hi_e) < 0) goto out;
        pos = j = 0;
        while (PyDict_Next(said, &pos, &k, &v)) {
            int64_t e;
            j++;
            if (as_int64(k, &e) == 0) intmap_put(&said_of, e, (uint32_t)j);
        }
    }
    /* launches come in time order: most fall in the window of the launch before, [lo, hi) with hi the next
     * window's start; only when the starts are sorted */
    int cursor = nw > 0;
    for (Py_ssize_t i = 1; i < nw && cursor; i++) cursor = starts[i - 1] <= starts[i];
    double lo = INFINITY, hi = -INFINITY, end = -INFINITY;
    Py_ssize_t cur = -1;
    int in_order = 1, first = 1;
    double pts = 0.0, pgts = 0.0;
    for (Py_ssize_t i = 0; i < n_gpu; i++) {
        PyObject *g = gpu[i];
        if (Py_TYPE(g) != Gpu_t) {
            rc = DECLINE;
            goto out;
        }
        PyObject *name = FIELD(g, g_name), *gcat = FIELD(g, g_cat), *corr = FIELD(g, g_corr);
        PyObject *gts_o = FIELD(g, g_ts), *ext = FIELD(g, g_ext), *dur = FIELD(g, g_dur), *stream = FIELD(g, g_stream);
        if (!name || !gcat || !corr || !gts_o || !ext || !dur || !stream || !PyUnicode_CheckExact(gcat)) {
            rc = DECLINE;
            goto out;
        }
        int64_t c, e;
        PyObject *launch_ts = NULL, *by = NULL;
        if (corr != Py_None) {
            if (as_int64(corr, &c) < 0) {
                rc = DECLINE;
                goto out;
            }
            uint32_t at = intmap_get(&ts_of_corr, c);
            if (at) launch_ts = FIELD(rt[at - 1], r_ts);
        }
        if (ext != Py_None) {
            if (as_int64(ext, &e) < 0) {
                rc = DECLINE;
                goto out;
            }
            uint32_t at = intmap_get(&said_of, e);
            if (at) by = said_vals[at - 1];
        }
        size_t slot = pair_slot(&pairs, name, by);
        PyObject *cls = pairs.cls[slot];
        if (cls == NULL) {
            PyObject *made = class_of(classes, classify_key, name, by);
            if (made == NULL) goto out;
            int bad = pairs_put(&pairs, name, by, made);
            Py_DECREF(made);
            if (bad < 0) goto out;
            cls = pairs.cls[pair_slot(&pairs, name, by)];
        }
        PyObject *cat = PyTuple_GET_ITEM(cls, 0), *backend = PyTuple_GET_ITEM(cls, 1);
        int is_memop = PySet_Contains(memop_cats, gcat);
        if (is_memop < 0) goto out;
        if (is_memop) {
            int has = PyUnicode_Contains(gcat, s_memset_word);
            if (has < 0) goto out;
            cat = has ? s_memset : s_memcpy;
        }
        double gts, ts;
        if (finite_or_inf(gts_o, &gts) < 0 || (launch_ts != NULL && finite_or_inf(launch_ts, &ts) < 0)) {
            rc = DECLINE;
            goto out;
        }
        if (launch_ts == NULL) ts = gts;
        /* the launch order, (ts, gts), against the launch before's */
        if (in_order && !first && !(pts < ts) && !(pts == ts ? pgts <= gts : pts <= ts)) in_order = 0;
        pts = ts;
        pgts = gts;
        first = 0;
        Py_ssize_t it;
        if (lo <= ts && ts < hi) {
            it = ts < end ? cur : -1;
        } else {
            it = nw ? bisect_right(starts, nw, ts) - 1 : -1;
            if (it >= 0) {
                if (cursor) {
                    lo = starts[it];
                    hi = it + 1 < nw ? starts[it + 1] : INFINITY;
                    end = ends[it];
                    cur = it;
                }
                if (!(ts < ends[it])) it = -1;
            }
        }
        PyObject *it_o = PyLong_FromSsize_t(it);
        if (it_o == NULL) goto out;
        PyObject *argv[11] = {name, cat, backend, gts_o, dur, it_o, launch_ts ? launch_ts : Py_None, ext, corr,
                              is_memop ? Py_True : Py_False, stream};
        PyObject *inst = PyObject_Vectorcall((PyObject *)Instance_t, argv, 11, NULL);
        Py_DECREF(it_o);
        if (inst == NULL) goto out;
        int bad = PyList_Append(out, inst);
        Py_DECREF(inst);
        if (bad < 0) goto out;
    }
    *in_order_out = in_order;
    rc = 0;
out:
    intmap_free(&ts_of_corr);
    intmap_free(&said_of);
    PyMem_Free(said_vals);
    pairs_free(&pairs);
    return rc;
}

/* kernel_instances(gpu, runtime, said, classes, classify_key, starts, ends, memop_cats) -> (list, in_order) | None
 *
 * gpu, runtime: the trace's lists (or tuples) of records; said: external id -> what the launching CPU op says
 * (kernels._launching_ops); classes: the (category, backend) of each key seen so far (filled in); classify_key(name,
 * said or None) -> (category, backend) for a new key; starts, ends: the iteration windows (lists of floats). */
static PyObject *kernel_instances(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "kernel_instances takes 8 arguments");
        return NULL;
    }
    if (Instance_t == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_fastan.setup() was not called");
        return NULL;
    }
    PyObject *said = args[2], *classes = args[3], *classify_key = args[4], *starts_l = args[5], *ends_l = args[6];
    PyObject *memop_cats = args[7];
    if (!PyDict_Check(said) || !PyDict_Check(classes) || !PyList_Check(starts_l) || !PyList_Check(ends_l) ||
        !PyAnySet_Check(memop_cats) || PyList_GET_SIZE(starts_l) != PyList_GET_SIZE(ends_l)) {
        PyErr_SetString(PyExc_TypeError, "_fastan.kernel_instances: unexpected argument types");
        return NULL;
    }
    PyObject *gpu = PySequence_Fast(args[0], "gpu records must be a sequence");
    if (gpu == NULL) return NULL;
    PyObject *rt = PySequence_Fast(args[1], "runtime records must be a sequence");
    if (rt == NULL) {
        Py_DECREF(gpu);
        return NULL;
    }
    PyObject *result = NULL, *out = NULL;
    Py_ssize_t nw = PyList_GET_SIZE(starts_l);
    double *starts = doubles_of(starts_l, nw), *ends = NULL;
    if (starts == NULL) goto done;
    if ((ends = doubles_of(ends_l, nw)) == NULL) goto done;
    out = PyList_New(0);
    if (out == NULL) goto done;
    int in_order = 1;
    int rc = instances_into(out, PySequence_Fast_ITEMS(gpu), PySequence_Fast_GET_SIZE(gpu),
                            PySequence_Fast_ITEMS(rt), PySequence_Fast_GET_SIZE(rt), said, classes, classify_key,
                            starts, ends, nw, memop_cats, &in_order);
    if (rc == DECLINE) {
        result = Py_NewRef(Py_None);
    } else if (rc == 0) {
        result = Py_BuildValue("(OO)", out, in_order ? Py_True : Py_False);
    }
done:
    if (result == NULL && !PyErr_Occurred()) result = Py_NewRef(Py_None); /* a list that is not all floats */
    Py_XDECREF(out);
    PyMem_Free(starts);
    PyMem_Free(ends);
    Py_DECREF(gpu);
    Py_DECREF(rt);
    return result;
}

/* The one argument of a function of one sequence (``usage`` names it), as a fast sequence; NULL with TypeError. */
static PyObject *only_sequence(PyObject *const *args, Py_ssize_t nargs, const char *usage) {
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    return PySequence_Fast(args[0], usage);
}

/* ---- tally(raw, count): kernels._tally ---- */

typedef struct {
    Py_ssize_t calls;
    double time;
    PyObject *first; /* borrowed: raw holds it */
} PerName;

/* An instance's iteration as a Py_ssize_t; -1 with no error set: declined. */
static inline int iteration_of(PyObject *k, Py_ssize_t *out) {
    PyObject *o = FIELD(k, k_iteration);
    if (o == NULL || !PyLong_CheckExact(o)) return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    *out = (Py_ssize_t)v;
    return 0;
}

static PyObject *list_of_counts(const Py_ssize_t *xs, Py_ssize_t n) {
    PyObject *l = PyList_New(n);
    if (l == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyLong_FromSsize_t(xs[i]);
        if (v == NULL) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, v);
    }
    return l;
}

/* tally(raw, count) -> (instances, per_step, memop_steps, names_step, calls, time_us, meta) | None */
static PyObject *tally(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyList_Check(args[0]) || !PyLong_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "tally(raw: list, count: int)");
        return NULL;
    }
    PyObject *raw = args[0];
    Py_ssize_t count = PyLong_AsSsize_t(args[1]);
    if (count == -1 && PyErr_Occurred()) return NULL;
    if (count < 0) Py_RETURN_NONE;
    PyObject *result = NULL, *instances = NULL, *index = NULL, *calls = NULL, *time_us = NULL, *meta = NULL;
    PyObject *per_l = NULL, *mem_l = NULL, *names_l = NULL;
    Py_ssize_t *per = PyMem_Calloc((size_t)count + 1, sizeof(Py_ssize_t));
    Py_ssize_t *mem = PyMem_Calloc((size_t)count + 1, sizeof(Py_ssize_t));
    uint64_t *names = PyMem_Calloc((size_t)count + 1, sizeof(uint64_t));
    PerName *by = NULL;
    Py_ssize_t n_by = 0, cap_by = 0;
    int declined = 0;
    if (per == NULL || mem == NULL || names == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    if ((instances = PyList_New(0)) == NULL || (index = PyDict_New()) == NULL) goto out;
    Py_ssize_t n = PyList_GET_SIZE(raw);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = PyList_GET_ITEM(raw, i);
        Py_ssize_t it;
        if (Py_TYPE(k) != Instance_t || iteration_of(k, &it) < 0) {
            declined = 1;
            goto out;
        }
        if (it < 0) continue;
        PyObject *name = FIELD(k, k_name), *memop = FIELD(k, k_is_memop), *dur = FIELD(k, k_dur);
        if (it >= count || name == NULL || !PyUnicode_CheckExact(name) || (memop != Py_True && memop != Py_False) ||
            dur == NULL || !PyFloat_CheckExact(dur)) {
            declined = 1; /* (an iteration past the windows: Python's IndexError) */
            goto out;
        }
        if (PyList_Append(instances, k) < 0) goto out;
        if (memop == Py_True) {
            mem[it]++;
        } else {
            per[it]++;
            Py_hash_t h = PyObject_Hash(name);
            if (h == -1 && PyErr_Occurred()) goto out;
            names[it] = (names[it] + (uint64_t)h) & 0xFFFFFFFFFFFFULL;
        }
        PyObject *j = PyDict_GetItemWithError(index, name);
        if (j == NULL) {
            if (PyErr_Occurred()) goto out;
            if (n_by == cap_by) {
                Py_ssize_t cap = cap_by ? cap_by * 2 : 64;
                PerName *grown = PyMem_Realloc(by, (size_t)cap * sizeof(PerName));
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto out;
                }
                by = grown;
                cap_by = cap;
            }
            PyObject *jo = PyLong_FromSsize_t(n_by);
            if (jo == NULL) goto out;
            int bad = PyDict_SetItem(index, name, jo);
            Py_DECREF(jo);
            if (bad < 0) goto out;
            by[n_by].calls = 1;
            by[n_by].time = 0.0 + PyFloat_AS_DOUBLE(dur);
            by[n_by].first = k;
            n_by++;
        } else {
            PerName *p = &by[PyLong_AsSsize_t(j)];
            p->calls++;
            p->time += PyFloat_AS_DOUBLE(dur);
        }
    }
    if ((calls = PyDict_New()) == NULL || (time_us = PyDict_New()) == NULL || (meta = PyDict_New()) == NULL) goto out;
    /* the index's order is first-seen order: the order the Python loop inserts the names in */
    {
        Py_ssize_t pos = 0, j = 0;
        PyObject *name, *value;
        while (PyDict_Next(index, &pos, &name, &value)) {
            PerName *p = &by[j++];
            PyObject *c = PyLong_FromSsize_t(p->calls), *t = PyFloat_FromDouble(p->time);
            int bad = c == NULL || t == NULL || PyDict_SetItem(calls, name, c) < 0 ||
                      PyDict_SetItem(time_us, name, t) < 0 || PyDict_SetItem(meta, name, p->first) < 0;
            Py_XDECREF(c);
            Py_XDECREF(t);
            if (bad) goto out;
        }
    }
    if ((per_l = list_of_counts(per, count)) == NULL || (mem_l = list_of_counts(mem, count)) == NULL) goto out;
    if ((names_l = PyList_New(count)) == NULL) goto out;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(names[i]);
        if (v == NULL) goto out;
        PyList_SET_ITEM(names_l, i, v);
    }
    result = PyTuple_Pack(7, instances, per_l, mem_l, names_l, calls, time_us, meta);
out:
    if (declined && !PyErr_Occurred()) result = Py_NewRef(Py_None);
    PyMem_Free(per);
    PyMem_Free(mem);
    PyMem_Free(names);
    PyMem_Free(by);
    Py_XDECREF(instances);
    Py_XDECREF(index);
    Py_XDECREF(calls);
    Py_XDECREF(time_us);
    Py_XDECREF(meta);
    Py_XDECREF(per_l);
    Py_XDECREF(mem_l);
    Py_XDECREF(names_l);
    return result;
}

/* ---- busy_per_iteration(instances): launch._busy_per_iteration's one pass ---- */

/* -> {iteration: busy µs} | None (declined: out of (iteration, start, end) order, a NaN, other types; the Python
 * pass then sorts) */
static PyObject *busy_per_iteration(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    PyObject *seq = only_sequence(args, nargs, "busy_per_iteration(instances): a sequence of records");
    if (seq == NULL) return NULL;
    PyObject *busy = PyDict_New();
    if (busy == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), current = -1;
    PyObject *const *items = PySequence_Fast_ITEMS(seq);
    double total = 0.0, end = -INFINITY, ps = -INFINITY, pe = -INFINITY;
    int declined = 0, failed = 0;
    for (Py_ssize_t i = 0; i < n && !declined && !failed; i++) {
        PyObject *k = items[i];
        Py_ssize_t it;
        if (Py_TYPE(k) != Instance_t || iteration_of(k, &it) < 0) {
            declined = 1;
            break;
        }
        PyObject *so = FIELD(k, k_ts), *dur = FIELD(k, k_dur);
        if (so == NULL || dur == NULL || !PyFloat_CheckExact(so) || !PyFloat_CheckExact(dur)) {
            declined = 1;
            break;
        }
        double s = PyFloat_AS_DOUBLE(so), e = s + PyFloat_AS_DOUBLE(dur);
        if (it != current) {
            if (it < current) {
                declined = 1;
                break;
            }
            if (current >= 0) {
                PyObject *key = PyLong_FromSsize_t(current), *v = PyFloat_FromDouble(total);
                failed = key == NULL || v == NULL || PyDict_SetItem(busy, key, v) < 0;
                Py_XDECREF(key);
                Py_XDECREF(v);
            }
            current = it;
            total = 0.0;
            end = -INFINITY;
        } else if (s < ps || (s == ps && e < pe)) {
            declined = 1;
            break;
        }
        if (s != s || e != e) {
            declined = 1;
            break;
        }
        ps = s;
        pe = e;
        if (e <= end) continue;
        total += e - (end > s ? end : s); /* max(s, end): the first of equals, the same value */
        end = e;
    }
    if (!declined && !failed && current >= 0) {
        PyObject *key = PyLong_FromSsize_t(current), *v = PyFloat_FromDouble(total);
        failed = key == NULL || v == NULL || PyDict_SetItem(busy, key, v) < 0;
        Py_XDECREF(key);
        Py_XDECREF(v);
    }
    Py_DECREF(seq);
    if (failed) {
        Py_DECREF(busy);
        return NULL;
    }
    if (declined) {
        Py_DECREF(busy);
        Py_RETURN_NONE;
    }
    return busy;
}

/* ---- launch_windows(runtime, is_launch, windows, busy_of): launch.launch_profile's per-window sums ---- */

static inline Py_ssize_t bisect_left(const double *a, Py_ssize_t n, double x) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int append_float(PyObject *list, double v) {
    PyObject *o = PyFloat_FromDouble(v);
    if (o == NULL) return -1;
    int rc = PyList_Append(list, o);
    Py_DECREF(o);
    return rc;
}

static int append_count(PyObject *list, Py_ssize_t v) {
    PyObject *o = PyLong_FromSsize_t(v);
    if (o == NULL) return -1;
    int rc = PyList_Append(list, o);
    Py_DECREF(o);
    return rc;
}

/* -> (walls, busy, path, runtime, counts) | None (declined: launches out of time order, a NaN duration, a time
 * or a window that is not a float) */
static PyObject *launch_windows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4 || !PyDict_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "launch_windows(runtime, is_launch, windows, busy_of: dict)");
        return NULL;
    }
    PyObject *is_launch = args[1], *busy_of = args[3];
    PyObject *rt = PySequence_Fast(args[0], "runtime records must be a sequence");
    if (rt == NULL) return NULL;
    PyObject *wins = PySequence_Fast(args[2], "windows must be a sequence");
    if (wins == NULL) {
        Py_DECREF(rt);
        return NULL;
    }
    PyObject *result = NULL, *lists[5] = {NULL, NULL, NULL, NULL, NULL};
    Py_ssize_t n_rt = PySequence_Fast_GET_SIZE(rt), n = 0;
    double *starts = PyMem_Malloc((size_t)(n_rt + 1) * sizeof(double));
    double *ends = PyMem_Malloc((size_t)(n_rt + 1) * sizeof(double));
    double *durs = PyMem_Malloc((size_t)(n_rt + 1) * sizeof(double));
    int declined = 0;
    if (starts == NULL || ends == NULL || durs == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    /* the launches: runtime calls that put work on the GPU, at a time that is not NaN */
    for (Py_ssize_t i = 0; i < n_rt; i++) {
        PyObject *r = PySequence_Fast_ITEMS(rt)[i];
        if (Py_TYPE(r) != Runtime_t) {
            declined = 1;
            goto out;
        }
        PyObject *name = FIELD(r, r_name), *ts = FIELD(r, r_ts), *dur = FIELD(r, r_dur);
        if (name == NULL || ts == NULL || dur == NULL) {
            declined = 1;
            goto out;
        }
        PyObject *yes = PyObject_GetItem(is_launch, name);
        if (yes == NULL) goto out;
        int launch = PyObject_IsTrue(yes);
        Py_DECREF(yes);
        if (launch < 0) goto out;
        if (!launch) continue;
        if (!PyFloat_CheckExact(ts) || !PyFloat_CheckExact(dur)) {
            declined = 1;
            goto out;
        }
        double t = PyFloat_AS_DOUBLE(ts), d = PyFloat_AS_DOUBLE(dur);
        if (t != t) continue;
        if (d != d || (n > 0 && !(starts[n - 1] <= t))) { /* (the Python pass sorts those) */
            declined = 1;
            goto out;
        }
        starts[n] = t;
        ends[n] = t + d;
        durs[n] = d;
        n++;
    }
    for (int j = 0; j < 5; j++) {
        if ((lists[j] = PyList_New(0)) == NULL) goto out;
    }
    /* windows follow each other (a window's start is the one before's end): its first launch is where the one
     * before's bisect for that end stopped */
    double last_end = INFINITY;
    Py_ssize_t last_hi = 0, n_w = PySequence_Fast_GET_SIZE(wins);
    for (Py_ssize_t i = 0; i < n_w; i++) {
        PyObject *w = PySequence_Fast_ITEMS(wins)[i];
        double start, end;
        if (!PyTuple_Check(w) || PyTuple_GET_SIZE(w) != 2 || finite_or_inf(PyTuple_GET_ITEM(w, 0), &start) < 0 ||
            finite_or_inf(PyTuple_GET_ITEM(w, 1), &end) < 0) {
            declined = 1;
            goto out;
        }
        if (end == INFINITY) continue;
        PyObject *key = PyLong_FromSsize_t(i);
        if (key == NULL) goto out;
        PyObject *b = PyDict_GetItemWithError(busy_of, key);
        Py_DECREF(key);
        if (b == NULL) {
            if (PyErr_Occurred()) goto out;
            continue; /* no kernels in this iteration */
        }
        Py_ssize_t lo, hi;
        if (start < end) {
            lo = start == last_end ? last_hi : bisect_left(starts, n, start);
            hi = last_hi = bisect_left(starts, n, end);
            last_end = end;
        } else {
            lo = hi = 0;
        }
        if (append_float(lists[0], end - start) < 0 || PyList_Append(lists[1], b) < 0) goto out;
        double top = start;
        if (hi > lo) {
            top = ends[lo];
            for (Py_ssize_t j = lo + 1; j < hi; j++)
                if (ends[j] > top) top = ends[j];
        }
        if (append_float(lists[2], top - start) < 0) goto out;
        if (hi > lo) {
            double sum = 0.0; /* sum(): from 0 on, in order */
            for (Py_ssize_t j = lo; j < hi; j++) sum += durs[j];
            if (append_float(lists[3], sum) < 0) goto out;
        } else if (append_count(lists[3], 0) < 0) { /* sum([]) is the int 0 */
            goto out;
        }
        if (append_count(lists[4], hi > lo ? hi - lo : 0) < 0) goto out;
    }
    result = PyTuple_Pack(5, lists[0], lists[1], lists[2], lists[3], lists[4]);
out:
    if (declined && !PyErr_Occurred()) result = Py_NewRef(Py_None);
    for (int j = 0; j < 5; j++) Py_XDECREF(lists[j]);
    PyMem_Free(starts);
    PyMem_Free(ends);
    PyMem_Free(durs);
    Py_DECREF(rt);
    Py_DECREF(wins);
    return result;
}

/* ---- scans of the CPU records ---- */

/* str == a constant: the identity first (the reader interns categories), then the text */
static inline int is_str(PyObject *s, PyObject *constant) {
    return s == constant || (PyUnicode_CheckExact(s) && PyUnicode_Compare(s, constant) == 0);
}

/* top_level(cpu) -> [top-level cpu_op / user_annotation events] | None (declined: more than one thread, or records
 * of other types): kernels._main_thread_top_level's one-thread scan, with its one-thread test. */
static PyObject *top_level(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    PyObject *seq = only_sequence(args, nargs, "top_level(cpu): a sequence of records");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *const *items = PySequence_Fast_ITEMS(seq);
    PyObject *group = PyList_New(0), *tid0 = NULL;
    int declined = 0;
    if (group == NULL) goto fail;
    double end = -INFINITY;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = items[i];
        if (Py_TYPE(e) != Cpu_t) {
            declined = 1;
            break;
        }
        PyObject *tid = FIELD(e, c_tid), *ts = FIELD(e, c_ts), *dur = FIELD(e, c_dur), *cat = FIELD(e, c_cat);
        /* ints, strings and None compare as a set holds them (no NaN among them) */
        if (tid == NULL || !(tid == Py_None || PyLong_CheckExact(tid) || PyUnicode_CheckExact(tid)) ||
            ts == NULL || !PyFloat_CheckExact(ts) || dur == NULL || cat == NULL) {
            declined = 1;
            break;
        }
        if (tid0 == NULL) {
            tid0 = tid;
        } else if (tid != tid0) {
            int same = PyObject_RichCompareBool(tid0, tid, Py_EQ);
            if (same < 0) goto fail;
            if (!same) {
                declined = 1; /* several threads: the Python scan picks the main one */
                break;
            }
        }
        double t = PyFloat_AS_DOUBLE(ts);
        if (t >= end && (is_str(cat, s_cpu_op) || is_str(cat, s_user_annotation))) {
            if (!PyFloat_CheckExact(dur)) {
                declined = 1;
                break;
            }
            if (PyList_Append(group, e) < 0) goto fail;
            end = t + PyFloat_AS_DOUBLE(dur);
        }
    }
    Py_DECREF(seq);
    if (declined) {
        Py_DECREF(group);
        Py_RETURN_NONE;
    }
    return group;
fail:
    Py_DECREF(seq);
    Py_XDECREF(group);
    return NULL;
}

/* named(cpu, names) -> [e for e in cpu if e.name in names] | None (records of other types) */
static PyObject *named(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyAnySet_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "named(cpu, names: set)");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(args[0], "cpu records must be a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *const *items = PySequence_Fast_ITEMS(seq);
    PyObject *out = PyList_New(0);
    if (out == NULL) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = items[i];
        PyObject *name = Py_TYPE(e) == Cpu_t ? FIELD(e, c_name) : NULL;
        if (name == NULL) {
            Py_DECREF(seq);
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        int in = PySet_Contains(args[1], name);
        if (in < 0 || (in && PyList_Append(out, e) < 0)) goto fail;
    }
    Py_DECREF(seq);
    return out;
fail:
    Py_DECREF(seq);
    Py_XDECREF(out);
    return NULL;
}

/* by_external_id(cpu) -> {external id: the first cpu_op with it} | None (records of other types) */
static PyObject *by_external_id(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    PyObject *seq = only_sequence(args, nargs, "by_external_id(cpu): a sequence of records");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *const *items = PySequence_Fast_ITEMS(seq);
    PyObject *out = PyDict_New();
    if (out == NULL) goto fail;
    /* read backwards, as the dict comprehension over reversed(cpu) does: the first one is written last */
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        PyObject *e = items[i];
        PyObject *ext = Py_TYPE(e) == Cpu_t ? FIELD(e, c_ext) : NULL, *cat = ext ? FIELD(e, c_cat) : NULL;
        if (ext == NULL || cat == NULL) {
            Py_DECREF(seq);
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        if (ext == Py_None) continue;
        int op = is_str(cat, s_cpu_op);
        if (!op && !PyUnicode_CheckExact(cat)) { /* == of another type: Python's, not this */
            Py_DECREF(seq);
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        if (op && PyDict_SetItem(out, ext, e) < 0) goto fail;
    }
    Py_DECREF(seq);
    return out;
fail:
    Py_DECREF(seq);
    Py_XDECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, NULL},
    {"kernel_instances", (PyCFunction)(void (*)(void))kernel_instances, METH_FASTCALL, NULL},
    {"tally", (PyCFunction)(void (*)(void))tally, METH_FASTCALL, NULL},
    {"busy_per_iteration", (PyCFunction)(void (*)(void))busy_per_iteration, METH_FASTCALL, NULL},
    {"launch_windows", (PyCFunction)(void (*)(void))launch_windows, METH_FASTCALL, NULL},
    {"top_level", (PyCFunction)(void (*)(void))top_level, METH_FASTCALL, NULL},
    {"named", (PyCFunction)(void (*)(void))named, METH_FASTCALL, NULL},
    {"by_external_id", (PyCFunction)(void (*)(void))by_external_id, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kernelscope.analysis._fastan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastan(void) { return PyModule_Create(&module); }
