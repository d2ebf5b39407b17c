/* The streaming reader's chunk loop in C: kernelscope/trace.py's _decode_events + _Builder.add_structs for one
 * chunk (a run of whole events, `{...},{...}`), for the events as Kineto writes them.
 *
 * add_chunk(builder, data, start, end) parses data[start:end] into a buffer of pending records first, checking
 * every value against what the strict msgspec schema (_Event, _Args) takes; anything it does not take exactly as
 * that path does (a backslash in any string, a non-UTF-8 byte, a value of another JSON type, a duplicate known key,
 * an integer that does not fit, a nesting deeper than MAX_DEPTH, malformed JSON, a missing or unknown "ph") returns
 * None before any record is built, and the Python path takes the chunk unchanged. Otherwise the records are built
 * and appended to the builder's lists with the builder's own interning dicts, and (total, skipped) is returned.
 *
 * Every read is bounds-checked against `end` (the scans a word at a time load only whole words before it); nesting
 * is depth-limited, and skipping a nested value is one loop (no recursion). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
/* (KS_NO_SIMD: the portable word-at-a-time paths alone, to test them on x86) */
#if defined(__SSE2__) && !defined(KS_NO_SIMD)
#include <emmintrin.h>
#define KS_SSE2 1
#endif

/* With glibc the parse runs without the GIL (parse() below): every call in it is plain C, the one correctly rounded
 * decimal conversion it needs included (strtod_l in the "C" locale: correctly rounded like Python's own
 * PyOS_string_to_double, so the same double). Elsewhere the GIL is held throughout and Python's conversion is used. */
#if defined(__GLIBC__)
#include <locale.h>
#define KS_NOGIL 1
static locale_t c_locale = (locale_t)0;
#endif

#if defined(__GNUC__)
#define ALWAYS_INLINE __attribute__((always_inline))
#else
#define ALWAYS_INLINE
#endif

#define MAX_DEPTH 64
#define MAX_NUM_LEN 64

/* ---- setup state (module globals, set once by setup()) ---- */
static PyObject *GpuEvent_t, *RuntimeEvent_t, *CpuEvent_t;
#define MAX_CATS 32
static int n_cats;
static struct { char *s; Py_ssize_t n; int kind; PyObject *cnst; } cats[MAX_CATS];
#define MAX_PHASES 64
static int n_phases;
static struct { char s[8]; Py_ssize_t n; } phases[MAX_PHASES];
static unsigned char phase1[256]; /* the phases of one byte, by that byte (Chrome's are all one byte) */
static int KIND_GPU, KIND_RUNTIME, KIND_CPU, KIND_ANN;

/* ---- values ---- */
enum { V_MISSING = 0, V_NULL, V_FALSE, V_TRUE, V_NUM, V_STR, V_ARRAY, V_OBJECT };

/* A number as parse_number leaves it: enough for the conversions without a second pass over its digits. */
typedef struct {
    uint64_t m;          /* the value of all its digits, mod 2**64 */
    Py_ssize_t idig;     /* digits before any '.' */
    Py_ssize_t sig;      /* significant digits: from the first nonzero one on (0: the value is zero) */
    Py_ssize_t exp10;    /* the power of ten m is scaled by */
    int neg;
    int is_int;          /* no fraction and no exponent */
} Num;

typedef struct {
    int type;
    int ascii;           /* V_STR: all bytes < 0x80 */
    const char *s;       /* V_STR: contents (no quotes); V_NUM/V_ARRAY/V_OBJECT: the raw text */
    Py_ssize_t n;
    const char *raw;     /* the value's JSON text, as msgspec.Raw holds it */
    Py_ssize_t raw_n;
    Num num;             /* V_NUM */
} Val;

typedef struct {
    const unsigned char *p, *end;
} Parser;

static inline void skip_ws(Parser *ps) {
    /* (one comparison rejects every byte above ' ': what follows a token in compact JSON) */
    while (ps->p < ps->end && *ps->p <= ' ' &&
           (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
        ps->p++;
}

/* The bytes of w that end a plain run of string: '"', '\\', a control character or non-ASCII (each such byte's high
 * bit set; the lowest set one is a true one: a borrow only runs upwards from a true one). */
static inline uint64_t string_stops(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    return (((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w) & highs;
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(KS_NO_SIMD)
#define KS_SWAR_LE 1
#endif

#ifdef KS_SSE2
/* string_stops for 16 bytes, as a bit per byte (signed: a byte >= 0x80 is below 0x20 too). */
static inline unsigned string_stops16(__m128i x) {
    __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                             _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
                                _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
    return (unsigned)_mm_movemask_epi8(stop);
}
#endif

/* At a '"': validates the string (no backslash, no control character, strict UTF-8); 0 or -1. */
static inline ALWAYS_INLINE int parse_string(Parser *ps, const char **s, Py_ssize_t *n, int *ascii) {
    const unsigned char *p = ps->p + 1, *end = ps->end;
    const unsigned char *start = p;
    int is_ascii = 1;
    while (1) {
#ifdef KS_SSE2
        /* 16 bytes at a time while none is '"', '\\', a control character or non-ASCII */
        while (end - p >= 16) {
            unsigned mask = string_stops16(_mm_loadu_si128((const __m128i *)p));
            if (mask != 0) {
                p += __builtin_ctz(mask);
                break;
            }
            p += 16;
        }
#endif
        /* 8 bytes at a time while none is '"', '\\', a control character or non-ASCII */
        while (end - p >= 8) {
            uint64_t w, hit;
            memcpy(&w, p, 8);
            if ((hit = string_stops(w)) != 0) {
#ifdef KS_SWAR_LE
                p += __builtin_ctzll(hit) >> 3;
#endif
                break;
            }
            p += 8;
        }
        while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
        if (p >= end) return -1;
        unsigned char c = *p;
        if (c == '"') break;
        if (c < 0x80) return -1; /* backslash or control character */
        is_ascii = 0;
        /* strict UTF-8 (what PyUnicode_DecodeUTF8 takes): no overlong forms, no surrogates, <= U+10FFFF */
        if (c >= 0xC2 && c <= 0xDF) {
            if (end - p < 2 || (p[1] & 0xC0) != 0x80) return -1;
            p += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (end - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return -1;
            if (c == 0xE0 && p[1] < 0xA0) return -1;
            if (c == 0xED && p[1] > 0x9F) return -1;
            p += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (end - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return -1;
            if (c == 0xF0 && p[1] < 0x90) return -1;
            if (c == 0xF4 && p[1] > 0x8F) return -1;
            p += 4;
        } else {
            return -1;
        }
    }
    *s = (const char *)start;
    *n = p - start;
    *ascii = is_ascii;
    ps->p = p + 1;
    return 0;
}

static inline int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

#ifdef KS_SWAR_LE
/* How many of w's 8 bytes, from the first, are digits: each byte in '0'..'9' has high nibble 3, and adding 6 does not
 * carry out of its low nibble (a carry out of a byte only reaches the bytes above a non-digit, so the lowest flagged
 * byte is a true one). */
static inline int leading_digits(uint64_t w) {
    uint64_t bad = ((w & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL) |
                   (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL);
    return bad ? __builtin_ctzll(bad) >> 3 : 8;
}

/* The value of 8 digits (the first in the lowest byte), in three multiplies. */
static inline uint64_t eight_digits(uint64_t w) {
    w -= 0x3030303030303030ULL;
    w = w * 10 + (w >> 8);
    return (((w & 0x000000FF000000FFULL) * 0x000F424000000064ULL) +
            (((w >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL)) >> 32;
}

static const uint64_t POW10_U64[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
#endif

/* Past a run of digits, their value added to *m (m * 10**count + value, mod 2**64: exact up to 19 digits in all):
 * a word at a time where 8 bytes are there (its leading digits taken at once), then a byte at a time. */
static inline const unsigned char *scan_digits(const unsigned char *p, const unsigned char *end, uint64_t *m) {
    uint64_t x = *m;
#ifdef KS_SWAR_LE
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        int k = leading_digits(w);
        if (k == 8) {
            x = x * 100000000ULL + eight_digits(w);
            p += 8;
            continue;
        }
        if (k > 0) {
            /* the k digits moved to the top bytes, '0's below them: the same value */
            x = x * POW10_U64[k] + eight_digits((w << (8 * (8 - k))) | (0x3030303030303030ULL >> (8 * k)));
            p += k;
        }
        *m = x;
        return p;
    }
#endif
    for (; p < end && is_digit(*p); p++) x = x * 10 + (uint64_t)(*p - '0');
    *m = x;
    return p;
}

/* Past a run of digits (their value not needed). */
static inline const unsigned char *skip_digits(const unsigned char *p, const unsigned char *end) {
#ifdef KS_SWAR_LE
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        int k = leading_digits(w);
        p += k;
        if (k < 8) return p;
    }
#endif
    while (p < end && is_digit(*p)) p++;
    return p;
}

/* JSON's number grammar, syntax only; 0 or -1. */
static inline ALWAYS_INLINE int skip_number(Parser *ps) {
    const unsigned char *p = ps->p, *end = ps->end;
    if (p < end && *p == '-') p++;
    if (p >= end) return -1;
    if (*p == '0') {
        p++;
        if (p < end && is_digit(*p)) return -1;
    } else if (is_digit(*p)) {
        p = skip_digits(p, end);
    } else {
        return -1;
    }
    if (p < end && *p == '.') {
        const unsigned char *d = ++p;
        p = skip_digits(p, end);
        if (p == d) return -1;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        const unsigned char *d = p;
        while (p < end && is_digit(*p)) p++;
        if (p == d) return -1;
    }
    ps->p = p;
    return 0;
}

/* JSON's number grammar, with what the conversions need gathered on the way (one pass over the digits); 0 or -1. */
static inline ALWAYS_INLINE int parse_number(Parser *ps, Num *num) {
    const unsigned char *p = ps->p, *end = ps->end;
    uint64_t m = 0;
    Py_ssize_t idig, sig = 0, exp10 = 0;
    int neg = 0, is_int = 1;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= end) return -1;
    if (*p == '0') {
        p++;
        idig = 1;
        if (p < end && is_digit(*p)) return -1;
    } else if (is_digit(*p)) {
        const unsigned char *d = p;
        p = scan_digits(p, end, &m);
        idig = sig = p - d; /* (the first is not '0': all are significant) */
    } else {
        return -1;
    }
    if (p < end && *p == '.') {
        is_int = 0;
        const unsigned char *d = ++p;
        if (sig == 0)
            while (p < end && *p == '0') p++; /* zeros before the first nonzero digit: not significant */
        const unsigned char *z = p;
        p = scan_digits(p, end, &m);
        if (p == d) return -1;
        sig += p - z;
        exp10 = -(p - d);
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_int = 0;
        p++;
        int eneg = 0, ev = 0;
        if (p < end && (*p == '+' || *p == '-')) {
            eneg = *p == '-';
            p++;
        }
        const unsigned char *d = p;
        for (; p < end && is_digit(*p); p++) {
            if (ev < 100000) ev = ev * 10 + (*p - '0');
        }
        if (p == d) return -1;
        exp10 += eneg ? -ev : ev;
    }
    num->m = m;
    num->idig = idig;
    num->sig = sig;
    num->exp10 = exp10;
    num->neg = neg;
    num->is_int = is_int;
    ps->p = p;
    return 0;
}

static int match_lit(Parser *ps, const char *lit, Py_ssize_t n) {
    if (ps->end - ps->p < n || memcmp(ps->p, lit, n) != 0) return -1;
    ps->p += n;
    return 0;
}

/* Past any JSON value (after whitespace), syntax-checked, nested no deeper than MAX_DEPTH counting from depth (>= 1);
 * 0 or -1. One loop rather than a call per element: the open containers are a stack of bits (1: an object), at most
 * MAX_DEPTH - 1 of them. */
static int skip_value(Parser *ps, int depth) {
    uint64_t objs = 0;
    int open = 0;
    const char *s;
    Py_ssize_t n;
    int ascii;
value:
    skip_ws(ps);
    if (ps->p >= ps->end) return -1;
    switch (*ps->p) {
        case '"':
            if (parse_string(ps, &s, &n, &ascii) < 0) return -1;
            break;
        case '[':
        case '{': {
            if (depth + open >= MAX_DEPTH) return -1;
            int obj = *ps->p == '{';
            ps->p++;
            skip_ws(ps);
            if (ps->p >= ps->end) return -1;
            if (*ps->p == (obj ? '}' : ']')) {
                ps->p++;
                break;
            }
            objs = (objs << 1) | (uint64_t)obj;
            open++;
            if (obj) goto key;
            goto value;
        }
        case 'n':
            if (match_lit(ps, "null", 4) < 0) return -1;
            break;
        case 't':
            if (match_lit(ps, "true", 4) < 0) return -1;
            break;
        case 'f':
            if (match_lit(ps, "false", 5) < 0) return -1;
            break;
        default:
            if (skip_number(ps) < 0) return -1;
            break;
    }
    /* after a value: the next element, or the end of its container (and maybe of the ones around it) */
    while (open > 0) {
        skip_ws(ps);
        if (ps->p >= ps->end) return -1;
        if (*ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            if (objs & 1) goto key;
            goto value;
        }
        if (*ps->p != ((objs & 1) ? '}' : ']')) return -1;
        ps->p++;
        objs >>= 1;
        open--;
    }
    return 0;
key:
    if (ps->p >= ps->end || *ps->p != '"') return -1;
    if (parse_string(ps, &s, &n, &ascii) < 0) return -1;
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != ':') return -1;
    ps->p++;
    goto value;
}

/* skip_value(ps, 1) for a member's value, with the scalars Kineto writes there (numbers, strings) taken inline. */
static inline ALWAYS_INLINE int skip_member_value(Parser *ps) {
    skip_ws(ps);
    if (ps->p < ps->end) {
        unsigned char c = *ps->p;
        if (is_digit(c) || c == '-') return skip_number(ps);
        if (c == '"') {
            const char *s;
            Py_ssize_t n;
            int ascii;
            return parse_string(ps, &s, &n, &ascii);
        }
    }
    return skip_value(ps, 1);
}

/* Any JSON value (after whitespace), syntax-checked, into v. */
static inline ALWAYS_INLINE int parse_value(Parser *ps, Val *v, int depth) {
    skip_ws(ps);
    if (ps->p >= ps->end) return -1;
    const unsigned char *start = ps->p;
    switch (*start) {
        case '"':
            if (parse_string(ps, &v->s, &v->n, &v->ascii) < 0) return -1;
            v->type = V_STR;
            v->raw = (const char *)start;
            v->raw_n = ps->p - start;
            return 0;
        case '{':
        case '[':
            if (skip_value(ps, depth) < 0) return -1;
            v->type = *start == '{' ? V_OBJECT : V_ARRAY;
            break;
        case 'n':
            if (match_lit(ps, "null", 4) < 0) return -1;
            v->type = V_NULL;
            break;
        case 't':
            if (match_lit(ps, "true", 4) < 0) return -1;
            v->type = V_TRUE;
            break;
        case 'f':
            if (match_lit(ps, "false", 5) < 0) return -1;
            v->type = V_FALSE;
            break;
        default:
            if (parse_number(ps, &v->num) < 0) return -1;
            v->type = V_NUM;
            break;
    }
    v->s = v->raw = (const char *)start;
    v->n = v->raw_n = ps->p - start;
    return 0;
}

/* ---- conversions (only for a value already syntax-checked) ---- */

/* An integer that surely fits int64 (at most 18 digits); "-0" is refused (the readers differ on its sign). */
static inline int val_int64(const Val *v, int64_t *out) {
    if (v->type != V_NUM || !v->num.is_int) return -1;
    if (v->num.idig > 18) return -1;
    if (v->num.neg && v->num.m == 0) return -1;
    *out = v->num.neg ? -(int64_t)v->num.m : (int64_t)v->num.m;
    return 0;
}

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* val_double's conversion of what its fast path does not take: Python's correctly rounded, locale-independent
 * conversion on a NUL-terminated copy (out of line: rare in a trace). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int val_double_slow(const Val *v, double *out) {
    const Num *num = &v->num;
    if (v->n >= MAX_NUM_LEN) return -1;
    char buf[MAX_NUM_LEN];
    memcpy(buf, v->s, v->n);
    buf[v->n] = '\0';
    char *endp = NULL;
#ifdef KS_NOGIL
    if (c_locale == (locale_t)0) return -1;
    double d = strtod_l(buf, &endp, c_locale);
#else
    double d = PyOS_string_to_double(buf, &endp, NULL);
    if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
#endif
    if (endp != buf + v->n) return -1;
    if (!isfinite(d)) return -1;                        /* overflow: msgspec refuses it */
    if (d != 0.0 && fabs(d) < DBL_MIN) return -1;       /* subnormal: not vouched for */
    if (d == 0.0 && num->sig > 0) return -1;            /* underflow to zero (a nonzero digit) */
    *out = d;
    return 0;
}

/* A JSON number as the double msgspec gives (correctly rounded); -1 for what this does not vouch for. */
static inline int val_double(const Val *v, double *out) {
    if (v->type != V_NUM) return -1;
    const Num *num = &v->num;
    if (num->is_int) {
        /* integers: float(int), exact below 2**53 (at most 15 digits) */
        if (num->idig > 15) return -1;
        if (num->neg && num->m == 0) return -1;
        *out = num->neg ? -(double)num->m : (double)num->m;
        return 0;
    }
    /* Clinger's fast path: an exact mantissa below 2**53 and a power of ten that is exact: one rounding. */
    if (num->sig <= 17 && num->m <= ((uint64_t)1 << 53) && num->exp10 >= -22 && num->exp10 <= 22) {
        double d = (double)num->m;
        d = num->exp10 < 0 ? d / POW10[-num->exp10] : d * POW10[num->exp10];
        *out = num->neg ? -d : d;
        return 0;
    }
    return val_double_slow(v, out);
}

/* ---- pending records ---- */

enum { S_NONE = 0, S_INT, S_FLOAT, S_STR, S_TRUE, S_FALSE };

/* (24 bytes: the records of a chunk are written once and read once, so their size is time) */
typedef struct {
    union {
        int64_t i;          /* S_INT */
        double d;           /* S_FLOAT */
        const char *s;      /* S_STR */
    };
    Py_ssize_t n;           /* S_STR */
    unsigned char type;
    unsigned char ascii;    /* S_STR */
} Scalar;

typedef struct {
    int kind;
    PyObject *cat;          /* the category's constant (borrowed: setup() keeps every one alive) */
    const char *name;
    Py_ssize_t name_n;
    int name_ascii;
    double ts;
    Scalar dur;             /* S_NONE or S_FLOAT */
    Scalar pid, tid;        /* S_NONE, S_INT or S_STR */
    Scalar corr, ext, stream, device;  /* S_NONE or S_INT */
    Scalar kb, kn;          /* any scalar */
    const char *raw[3];     /* Input Dims, Input type, Concrete Inputs (NULL: missing) */
    Py_ssize_t raw_n[3];
} Pending;

/* event keys */
enum { K_PH = 0, K_CAT, K_NAME, K_TS, K_DUR, K_PID, K_TID, K_ARGS, K_N };
/* args keys */
enum { A_CORR = 0, A_EXT, A_STREAM, A_DEVICE, A_KB, A_KN, A_DIMS, A_TYPES, A_CONC, A_N };

/* The key tables (an event's and its args' members; the categories), one lookup for all: a key is its first 16
 * bytes as two words, zero-padded, and its length; found by a hash of the first word, in a few probes at most, with
 * no memcmp (a key longer than 16 bytes is no known key). */
#define KEY_MAX 16
#define KEY_BITS 6
#define KEY_SLOTS (1 << KEY_BITS) /* more than twice MAX_CATS: a probe always ends at an empty slot */
typedef struct {
    uint64_t w0, w1;
    Py_ssize_t n;   /* 0: an empty slot (no known key is empty) */
    int id;         /* -1 in an empty slot */
} KeySlot;
typedef struct {
    uint64_t lens;      /* bit n: a key of n bytes is there (most unknown keys are refused by their length alone) */
    KeySlot slot[KEY_SLOTS];
} KeyTable;
typedef struct {
    const char *s;
    Py_ssize_t n;
    int id;
} KeyName;
#define KEY(s, id) {s, sizeof(s) - 1, id}

static const KeyName EVENT_KEYS[] = {KEY("ph", K_PH),   KEY("cat", K_CAT), KEY("name", K_NAME), KEY("ts", K_TS),
                                     KEY("dur", K_DUR), KEY("pid", K_PID), KEY("tid", K_TID),   KEY("args", K_ARGS)};
static const KeyName ARGS_KEYS[] = {KEY("correlation", A_CORR),   KEY("External id", A_EXT),
                                    KEY("stream", A_STREAM),      KEY("device", A_DEVICE),
                                    KEY("kernel_backend", A_KB),  KEY("kernel_name", A_KN),
                                    KEY("Input Dims", A_DIMS),    KEY("Input type", A_TYPES),
                                    KEY("Concrete Inputs", A_CONC)};
static KeyTable event_keys, args_keys;
static KeyTable cat_keys; /* the categories of at most KEY_MAX bytes, by their index in cats (set by setup()) */

#ifdef KS_SWAR_LE
/* The order Kineto writes an X event's keys in: each expected key, quoted, is one masked word to compare (a key found
 * so is the one parse_key would find: plain ASCII between two quotes). */
static const KeyName KINETO_ORDER[K_N] = {KEY("ph", K_PH),   KEY("cat", K_CAT), KEY("name", K_NAME),
                                          KEY("pid", K_PID), KEY("tid", K_TID), KEY("ts", K_TS),
                                          KEY("dur", K_DUR), KEY("args", K_ARGS)};
static struct {
    uint64_t word, mask;
    int len, id;
} kineto_order[K_N];

static void kineto_order_init(void) {
    for (int k = 0; k < K_N; k++) {
        unsigned char buf[8] = {0};
        int len = (int)KINETO_ORDER[k].n + 2;
        buf[0] = '"';
        memcpy(buf + 1, KINETO_ORDER[k].s, (size_t)len - 2);
        buf[len - 1] = '"';
        memcpy(&kineto_order[k].word, buf, 8);
        kineto_order[k].mask = ~0ULL >> (64 - 8 * len);
        kineto_order[k].len = len;
        kineto_order[k].id = KINETO_ORDER[k].id;
    }
}
#endif

static inline unsigned key_hash(uint64_t w0, Py_ssize_t n) {
    return (unsigned)(((w0 + (uint64_t)n) * 0x9E3779B97F4A7C15ULL) >> (64 - KEY_BITS));
}

static inline int key_find(const KeyTable *t, uint64_t w0, uint64_t w1, Py_ssize_t n) {
    if (!((t->lens >> n) & 1)) return -1; /* (n <= KEY_MAX) */
    for (unsigned i = key_hash(w0, n);; i = (i + 1) & (KEY_SLOTS - 1)) {
        const KeySlot *e = &t->slot[i];
        if (e->w0 == w0 && e->w1 == w1 && e->n == n) return e->id;
        if (e->n == 0) return -1;
    }
}

/* The key's words as key_find takes them, from a copy (the slow path: anything but a short ASCII key in the middle
 * of the buffer). */
static int key_of(const KeyTable *t, const char *s, Py_ssize_t n) {
    if (n > KEY_MAX) return -1;
    unsigned char buf[KEY_MAX] = {0};
    uint64_t w0, w1;
    memcpy(buf, s, (size_t)n);
    memcpy(&w0, buf, 8);
    memcpy(&w1, buf + 8, 8);
    return key_find(t, w0, w1, n);
}

#ifdef KS_SWAR_LE
/* key_find on the 16 bytes loaded at s, of which the key is the first n (<= KEY_MAX). */
static inline int key_find_loaded(const KeyTable *t, uint64_t w0, uint64_t w1, Py_ssize_t n) {
    if (n < 8) {
        w0 = n ? w0 & (~0ULL >> (64 - 8 * n)) : 0;
        w1 = 0;
    } else {
        w1 = n > 8 ? w1 & (~0ULL >> (64 - 8 * (n - 8))) : 0;
    }
    return key_find(t, w0, w1, n);
}
#endif

/* The index of the string s[:n] (in the buffer, which ends at end) in t, or -1. */
static inline int key_lookup(const KeyTable *t, const char *s, Py_ssize_t n, const unsigned char *end) {
#ifdef KS_SWAR_LE
    if (n <= KEY_MAX && end - (const unsigned char *)s >= 16) {
        uint64_t w0, w1;
        memcpy(&w0, s, 8);
        memcpy(&w1, s + 8, 8);
        return key_find_loaded(t, w0, w1, n);
    }
#endif
    return key_of(t, s, n);
}

static void key_table_init(KeyTable *t, const KeyName *keys, int n) {
    t->lens = 0;
    for (int i = 0; i < KEY_SLOTS; i++) {
        t->slot[i].w0 = t->slot[i].w1 = 0;
        t->slot[i].n = 0;
        t->slot[i].id = -1;
    }
    for (int k = 0; k < n; k++) {
        unsigned char buf[KEY_MAX] = {0};
        Py_ssize_t len = keys[k].n;
        if (len > KEY_MAX || len == 0) continue; /* (the empty key would read as an empty slot) */
        uint64_t w0, w1;
        memcpy(buf, keys[k].s, (size_t)len);
        memcpy(&w0, buf, 8);
        memcpy(&w1, buf + 8, 8);
        unsigned i = key_hash(w0, len);
        while (t->slot[i].n != 0) i = (i + 1) & (KEY_SLOTS - 1);
        t->slot[i].w0 = w0;
        t->slot[i].w1 = w1;
        t->slot[i].n = len;
        t->slot[i].id = keys[k].id;
        t->lens |= 1ULL << len;
    }
}

/* At a '"': a member's key, validated as parse_string does, and its index in t (-1: not a known key); 0 or -1.
 * A key of plain ASCII that ends within the next 16 bytes is found from the two words loaded to scan it. */
static inline ALWAYS_INLINE int parse_key(Parser *ps, const KeyTable *t, int *id) {
#ifdef KS_SWAR_LE
    const unsigned char *s = ps->p + 1;
    if (ps->end - s >= 16) {
        uint64_t w0, w1;
        int k = -1;
        memcpy(&w0, s, 8);
        memcpy(&w1, s + 8, 8);
#ifdef KS_SSE2
        unsigned stops = string_stops16(_mm_loadu_si128((const __m128i *)s));
        if (stops != 0) k = __builtin_ctz(stops);
#else
        uint64_t hit;
        if ((hit = string_stops(w0)) != 0) k = __builtin_ctzll(hit) >> 3;
        else if ((hit = string_stops(w1)) != 0) k = 8 + (__builtin_ctzll(hit) >> 3);
#endif
        if (k >= 0 && s[k] == '"') {
            *id = key_find_loaded(t, w0, w1, k);
            ps->p = s + k + 1;
            return 0;
        }
    }
#endif
    const char *k;
    Py_ssize_t kn;
    int ascii;
    if (parse_string(ps, &k, &kn, &ascii) < 0) return -1;
    *id = key_of(t, k, kn);
    return 0;
}

/* At a digit: a number into v (parse_value's case for it, at a branch of the caller's own: see parse_event). */
static inline ALWAYS_INLINE int parse_number_val(Parser *ps, Val *v) {
    v->s = v->raw = (const char *)ps->p;
    if (parse_number(ps, &v->num) < 0) return -1;
    v->type = V_NUM;
    v->n = v->raw_n = (const char *)ps->p - v->s;
    return 0;
}

/* Parses the members of an event's args into vals (by their index in args_keys), skipping other keys; *dup set on a
 * repeated known key. */
static int parse_args(Parser *ps, Val *vals, int *dup) {
    /* at '{' */
    ps->p++;
    skip_ws(ps);
    if (ps->p >= ps->end) return -1;
    if (*ps->p == '}') {
        ps->p++;
        return 0;
    }
    while (1) {
        int idx;
        if (ps->p >= ps->end || *ps->p != '"') return -1;
        if (parse_key(ps, &args_keys, &idx) < 0) return -1;
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != ':') return -1;
        ps->p++;
        if (idx >= 0) {
            if (vals[idx].type != V_MISSING) *dup = 1;
            if (parse_value(ps, &vals[idx], 1) < 0) return -1;
        } else {
            if (skip_member_value(ps) < 0) return -1;
        }
        skip_ws(ps);
        if (ps->p >= ps->end) return -1;
        if (*ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            continue;
        }
        if (*ps->p == '}') {
            ps->p++;
            return 0;
        }
        return -1;
    }
}

/* Optional int64 id: missing/null -> S_NONE. */
static inline int to_id(const Val *v, Scalar *out) {
    out->type = S_NONE;
    if (v->type == V_MISSING || v->type == V_NULL) return 0;
    if (val_int64(v, &out->i) < 0) return -1;
    out->type = S_INT;
    return 0;
}

/* pid/tid: int64 or str. */
static inline int to_tid(const Val *v, Scalar *out) {
    if (v->type == V_STR) {
        out->type = S_STR;
        out->s = v->s;
        out->n = v->n;
        out->ascii = v->ascii;
        return 0;
    }
    return to_id(v, out);
}

/* Any JSON scalar (kernel_backend, kernel_name). */
static inline int to_scalar(const Val *v, Scalar *out) {
    switch (v->type) {
        case V_MISSING:
        case V_NULL:
            out->type = S_NONE;
            return 0;
        case V_TRUE:
            out->type = S_TRUE;
            return 0;
        case V_FALSE:
            out->type = S_FALSE;
            return 0;
        case V_STR:
            return to_tid(v, out);
        case V_NUM:
            if (v->num.is_int) {
                out->type = S_INT;
                return val_int64(v, &out->i);
            }
            out->type = S_FLOAT;
            return val_double(v, &out->d);
        default:
            return -1;
    }
}

/* Optional float: missing/null -> S_NONE. */
static inline int to_float(const Val *v, Scalar *out) {
    out->type = S_NONE;
    if (v->type == V_MISSING || v->type == V_NULL) return 0;
    if (val_double(v, &out->d) < 0) return -1;
    out->type = S_FLOAT;
    return 0;
}

typedef struct {
    Pending *recs;
    Py_ssize_t n, cap, first_cap;
    Py_ssize_t total, skipped;
} Chunk;


/* The first buffer is sized from the chunk's length (a record per RECORD_BYTES of JSON: Kineto's kept events are
 * longer on average), so a chunk seldom grows it: each doubling copies every record and touches fresh pages. */
#define RECORD_BYTES 256

static int push(Chunk *ch, Pending **out) {
    if (ch->n == ch->cap) {
        Py_ssize_t cap = ch->cap ? ch->cap * 2 : ch->first_cap;
        Pending *r = PyMem_RawRealloc(ch->recs, (size_t)cap * sizeof(Pending));
        if (r == NULL) return -1;
        ch->recs = r;
        ch->cap = cap;
    }
    *out = &ch->recs[ch->n++];
    return 0;
}

/* One event at ps->p ('{'). 0, -1 (not handled) or -2 (out of memory). */
static int parse_event(Parser *ps, Chunk *ch) {
    Val ev[K_N], args[A_N];
    for (int i = 0; i < K_N; i++) ev[i].type = V_MISSING;
    for (int i = 0; i < A_N; i++) args[i].type = V_MISSING;
    unsigned dups = 0;
    int args_dup = 0, args_seen = 0, args_obj = 0;
    ps->p++;
    skip_ws(ps);
    if (ps->p >= ps->end) return -1;
    if (*ps->p != '}') {
#ifdef KS_SWAR_LE
        int next = 0; /* the place in KINETO_ORDER of the key expected next */
#endif
        while (1) {
            int idx;
            if (ps->p >= ps->end || *ps->p != '"') return -1;
#ifdef KS_SWAR_LE
            uint64_t w;
            if (next < K_N && ps->end - ps->p >= 8 && (memcpy(&w, ps->p, 8), (w & kineto_order[next].mask) ==
                                                                                  kineto_order[next].word)) {
                idx = kineto_order[next].id;
                ps->p += kineto_order[next].len;
                next++;
            } else
#endif
            if (parse_key(ps, &event_keys, &idx) < 0) {
                return -1;
            }
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') return -1;
            ps->p++;
            if (idx == K_ARGS) {
                if (args_seen) dups |= 1u << K_ARGS;
                args_seen = 1;
                skip_ws(ps);
                if (ps->p < ps->end && *ps->p == '{' && !args_obj) {
                    args_obj = 1;
                    if (parse_args(ps, args, &args_dup) < 0) return -1;
                } else {
                    if (skip_value(ps, 1) < 0) return -1;
                }
            } else if (idx >= 0) {
                Val *v = &ev[idx];
                if (v->type != V_MISSING) dups |= 1u << idx;
                skip_ws(ps);
                /* the numbers Kineto writes for ts, dur, pid and tid, and the strings for ph, cat and name, each
                 * taken at a branch of their own (one that the sequence of keys does not make a guess) */
                if (idx >= K_TS && idx <= K_TID && ps->p < ps->end && is_digit(*ps->p)) {
                    if (parse_number_val(ps, v) < 0) return -1;
                } else if (idx <= K_NAME && ps->p < ps->end && *ps->p == '"') {
                    v->raw = (const char *)ps->p;
                    if (parse_string(ps, &v->s, &v->n, &v->ascii) < 0) return -1;
                    v->type = V_STR;
                    v->raw_n = (const char *)ps->p - v->raw;
                } else if (parse_value(ps, v, 1) < 0) {
                    return -1;
                }
            } else {
                if (skip_member_value(ps) < 0) return -1;
            }
            skip_ws(ps);
            if (ps->p >= ps->end) return -1;
            if (*ps->p == ',') {
                ps->p++;
                skip_ws(ps);
                continue;
            }
            if (*ps->p == '}') break;
            return -1;
        }
    }
    ps->p++; /* '}' */
    ch->total++;
#ifdef EXP_NOPOST
    return 0;
#endif

    /* the phase */
    const Val *ph = &ev[K_PH];
    if (ph->type != V_STR || (dups & (1u << K_PH))) return -1;
    if (!(ph->n == 1 && ph->s[0] == 'X')) {
        if (ph->n == 1 && phase1[(unsigned char)ph->s[0]]) return 0;
        for (int i = 0; i < n_phases; i++) {
            if (phases[i].n == ph->n && memcmp(phases[i].s, ph->s, (size_t)ph->n) == 0) return 0;
        }
        return -1; /* an unknown phase: msgspec refuses the chunk */
    }

    /* an X event: every field typed as _Event and _Args take it */
    if (dups || args_dup) return -1;
    if (args_seen && !args_obj) return -1;
    const Val *cat = &ev[K_CAT], *name = &ev[K_NAME];
    int cat_none = cat->type == V_MISSING || cat->type == V_NULL;
    if (!cat_none && cat->type != V_STR) return -1;
    int name_none = name->type == V_MISSING || name->type == V_NULL;
    if (!name_none && name->type != V_STR) return -1;
    Scalar ts, dur, pid, tid, corr, ext, stream, device, kb, kn;
    if (to_float(&ev[K_TS], &ts) < 0 || to_float(&ev[K_DUR], &dur) < 0) return -1;
    if (to_tid(&ev[K_PID], &pid) < 0 || to_tid(&ev[K_TID], &tid) < 0) return -1;
    if (to_id(&args[A_CORR], &corr) < 0 || to_id(&args[A_EXT], &ext) < 0 || to_id(&args[A_STREAM], &stream) < 0 ||
        to_id(&args[A_DEVICE], &device) < 0)
        return -1;
    if (to_scalar(&args[A_KB], &kb) < 0 || to_scalar(&args[A_KN], &kn) < 0) return -1;

    /* add_structs' rules */
    if (cat_none) return 0;
    if (name_none || ts.type == S_NONE) {
        ch->skipped++;
        return 0;
    }
    int ci = key_lookup(&cat_keys, cat->s, cat->n, ps->end);
    if (ci < 0 && (cat->n > KEY_MAX || cat->n == 0)) { /* (not in cat_keys) */
        for (int i = 0; i < n_cats; i++) {
            if (cats[i].n == cat->n && memcmp(cats[i].s, cat->s, (size_t)cat->n) == 0) {
                ci = i;
                break;
            }
        }
    }
    if (ci < 0) return 0;
    Pending *r;
    if (push(ch, &r) < 0) return -2;
    r->kind = cats[ci].kind;
    r->cat = cats[ci].cnst;
    r->name = name->s;
    r->name_n = name->n;
    r->name_ascii = name->ascii;
    r->ts = ts.d;
    r->dur = dur;
    r->pid = pid;
    r->tid = tid;
    r->corr = corr;
    r->ext = ext;
    r->stream = stream;
    r->device = device;
    r->kb = kb;
    r->kn = kn;
    const int raws[3] = {A_DIMS, A_TYPES, A_CONC};
    for (int i = 0; i < 3; i++) {
        const Val *v = &args[raws[i]];
        r->raw[i] = v->type == V_MISSING ? NULL : v->raw;
        r->raw_n[i] = v->type == V_MISSING ? 0 : v->raw_n;
    }
    return 0;
}

/* The whole chunk: events separated by ',' (and whitespace), nothing else. */
static int parse_chunk(Parser *ps, Chunk *ch) {
    ch->first_cap = (ps->end - ps->p) / RECORD_BYTES + 64;
    skip_ws(ps);
    while (1) {
        if (ps->p >= ps->end || *ps->p != '{') return -1;
        int rc = parse_event(ps, ch);
        if (rc < 0) return rc;
        skip_ws(ps);
        if (ps->p >= ps->end) return 0;
        if (*ps->p != ',') return -1;
        ps->p++;
        skip_ws(ps);
    }
}

/* ---- building the records ---- */

static PyObject *make_str(const char *s, Py_ssize_t n, int ascii) {
    if (ascii) {
        PyObject *u = PyUnicode_New(n, 127);
        if (u == NULL) return NULL;
        memcpy(PyUnicode_DATA(u), s, (size_t)n);
        return u;
    }
    return PyUnicode_DecodeUTF8(s, n, NULL);
}

static PyObject *scalar_obj(const Scalar *sc) {
    switch (sc->type) {
        case S_INT: return PyLong_FromLongLong(sc->i);
        case S_FLOAT: return PyFloat_FromDouble(sc->d);
        case S_STR: return make_str(sc->s, sc->n, sc->ascii);
        case S_TRUE: Py_RETURN_TRUE;
        case S_FALSE: Py_RETURN_FALSE;
        default: Py_RETURN_NONE;
    }
}

/* dict.setdefault(v, v), stealing v; a new reference. */
static PyObject *intern(PyObject *dict, PyObject *v) {
    if (v == NULL) return NULL;
    PyObject *r = PyDict_SetDefault(dict, v, v);
    Py_XINCREF(r);
    Py_DECREF(v);
    return r;
}

/* cache.get(raw) or method(raw) (which fills the cache); a new reference. */
static PyObject *raw_lookup(PyObject *cache, PyObject *method, const char *s, Py_ssize_t n) {
    PyObject *key = PyBytes_FromStringAndSize(s, n);
    if (key == NULL) return NULL;
    PyObject *r = PyDict_GetItemWithError(cache, key);
    if (r != NULL) {
        Py_INCREF(r);
        Py_DECREF(key);
        return r;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    r = PyObject_CallOneArg(method, key);
    Py_DECREF(key);
    return r;
}

/* A per-call cache of interned objects, keyed by the value's bytes: a repeated name, duration or pid/tid is found
 * without building a str/float/int and hashing it again. It gives the object the builder's dict holds for that key
 * (the first lookup of a key goes through the dict), and holds a reference to it until the call ends. */
#define CACHE_SLOTS 4096
#define CACHE_MAX_USED (CACHE_SLOTS / 2)
#define CACHE_PROBES 16
enum { C_NAME = 1, C_DUR, C_ID };

typedef struct {
    uint64_t h;
    const char *p;      /* the key's bytes: in the chunk, or in inl */
    Py_ssize_t n;
    char inl[16];
    int tag;
    PyObject *obj;      /* NULL: an empty slot */
} CEntry;

typedef struct {
    CEntry *e;
    int used;
} Cache;

static inline uint64_t mix8(uint64_t h, const char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return (((h << 5) | (h >> 59)) ^ w) * 0x517cc1b727220a95ULL;
}

/* FxHash-style, 8 bytes per multiply; a key longer than 32 bytes is hashed by its length, first 16 and last 16
 * bytes (equality is always confirmed with memcmp, and a probe sequence is bounded: a collision costs time only) */
static uint64_t fnv(int tag, const char *p, Py_ssize_t n) {
    uint64_t h = ((uint64_t)tag << 56) ^ (uint64_t)n;
    if (n > 32) {
        h = mix8(mix8(h, p), p + 8);
        h = mix8(mix8(h, p + n - 16), p + n - 8);
        return h ^ (h >> 31);
    }
    while (n >= 8) {
        h = mix8(h, p);
        p += 8;
        n -= 8;
    }
    if (n > 0) {
        char tail[8] = {0};
        memcpy(tail, p, (size_t)n);
        h = mix8(h, tail);
    }
    return h ^ (h >> 31);
}

/* The cached object (a new reference), or NULL with *slot set to where it would go (NULL: cache full). */
static PyObject *cache_get(Cache *c, int tag, const char *p, Py_ssize_t n, uint64_t h, CEntry **slot) {
    *slot = NULL;
    if (c->e == NULL) return NULL;
    size_t i = (size_t)h & (CACHE_SLOTS - 1);
    for (int probe = 0; probe < CACHE_PROBES; probe++, i = (i + 1) & (CACHE_SLOTS - 1)) {
        CEntry *e = &c->e[i];
        if (e->obj == NULL) {
            if (c->used < CACHE_MAX_USED) *slot = e;
            return NULL;
        }
        if (e->h == h && e->tag == tag && e->n == n && memcmp(e->p, p, (size_t)n) == 0) {
            Py_INCREF(e->obj);
            return e->obj;
        }
    }
    return NULL; /* a long probe sequence: not cached */
}

static void cache_put(Cache *c, CEntry *slot, int tag, const char *p, Py_ssize_t n, uint64_t h, PyObject *obj) {
    if (slot == NULL) return;
    slot->h = h;
    slot->tag = tag;
    slot->n = n;
    if (p != NULL && n <= (Py_ssize_t)sizeof slot->inl && (tag != C_NAME)) {
        memcpy(slot->inl, p, (size_t)n);
        slot->p = slot->inl;
    } else {
        slot->p = p;
    }
    Py_INCREF(obj);
    slot->obj = obj;
    c->used++;
}

static void cache_clear(Cache *c) {
    if (c->e == NULL) return;
    for (size_t i = 0; i < CACHE_SLOTS; i++) Py_XDECREF(c->e[i].obj);
    PyMem_Free(c->e);
    c->e = NULL;
}

/* The interned name (a new reference). */
static PyObject *cached_name(Cache *c, PyObject *dict, const char *s, Py_ssize_t n, int ascii) {
    uint64_t h = fnv(C_NAME, s, n);
    CEntry *slot;
    PyObject *o = cache_get(c, C_NAME, s, n, h, &slot);
    if (o != NULL) return o;
    o = intern(dict, make_str(s, n, ascii));
    if (o != NULL) cache_put(c, slot, C_NAME, s, n, h, o);
    return o;
}

/* A scalar interned through dict (durations; pids and tids), a new reference. */
static PyObject *cached_scalar(Cache *c, int tag, PyObject *dict, const Scalar *sc) {
    char key[9];
    const char *p = key;
    Py_ssize_t n;
    key[0] = (char)sc->type;
    if (sc->type == S_INT) {
        memcpy(key + 1, &sc->i, 8);
        n = 9;
    } else if (sc->type == S_FLOAT) {
        memcpy(key + 1, &sc->d, 8);
        n = 9;
    } else if (sc->type == S_NONE) {
        n = 1;
    } else {
        return intern(dict, scalar_obj(sc)); /* strings: not cached (their bytes are not the whole key) */
    }
    uint64_t h = fnv(tag, p, n);
    CEntry *slot;
    PyObject *o = cache_get(c, tag, p, n, h, &slot);
    if (o != NULL) return o;
    o = intern(dict, scalar_obj(sc));
    if (o != NULL) cache_put(c, slot, tag, p, n, h, o);
    return o;
}

typedef struct {
    PyObject *lists[4]; /* by kind */
    PyObject *strs, *ids, *durs, *dims, *types, *dims_of, *types_of;
} Target;

static int build_records(const Chunk *ch, Target *t, Cache *cache) {
    for (Py_ssize_t i = 0; i < ch->n; i++) {
        const Pending *r = &ch->recs[i];
        /* own[]: the new references this record holds (released after the call); a[]: the call's arguments */
        PyObject *own[12] = {NULL};
        PyObject *a[12];
        Py_ssize_t na = 0;
        PyObject *type, *rec = NULL;
        int ok = 0;
        PyObject *cat = r->cat; /* borrowed: held by the module */
        PyObject *name = own[0] = cached_name(cache, t->strs, r->name, r->name_n, r->name_ascii);
        PyObject *ts = own[1] = PyFloat_FromDouble(r->ts);
        PyObject *dur = own[2] = cached_scalar(cache, C_DUR, t->durs, &r->dur);
        if (name == NULL || ts == NULL || dur == NULL) goto done;
        if (r->kind == KIND_GPU) {
            type = GpuEvent_t;
            own[3] = scalar_obj(&r->corr);
            own[4] = scalar_obj(&r->ext);
            own[5] = scalar_obj(&r->stream);
            own[6] = scalar_obj(&r->device);
            PyObject *v[8] = {name, cat, ts, dur, own[3], own[4], own[5], own[6]};
            na = 8;
            memcpy(a, v, sizeof v);
        } else if (r->kind == KIND_RUNTIME) {
            type = RuntimeEvent_t;
            own[3] = scalar_obj(&r->corr);
            own[4] = scalar_obj(&r->ext);
            own[5] = cached_scalar(cache, C_ID, t->ids, &r->tid);
            PyObject *v[6] = {name, ts, dur, own[3], own[4], own[5]};
            na = 6;
            memcpy(a, v, sizeof v);
        } else {
            type = CpuEvent_t;
            own[3] = cached_scalar(cache, C_ID, t->ids, &r->pid);
            if (own[3] == NULL) goto done;
            own[4] = cached_scalar(cache, C_ID, t->ids, &r->tid);
            own[5] = scalar_obj(&r->ext);
            PyObject *v[7] = {name, cat, ts, dur, own[3], own[4], own[5]};
            na = 7;
            memcpy(a, v, sizeof v);
            if (r->kind == KIND_CPU) {
                own[6] = scalar_obj(&r->kb);
                own[7] = scalar_obj(&r->kn);
                PyObject *caches[3] = {t->dims, t->types, t->types};
                PyObject *meths[3] = {t->dims_of, t->types_of, t->types_of};
                if (own[6] == NULL || own[7] == NULL) goto done;
                for (int k = 0; k < 3; k++) {
                    if (r->raw[k] == NULL) {
                        Py_INCREF(Py_None);
                        own[8 + k] = Py_None;
                    } else {
                        own[8 + k] = raw_lookup(caches[k], meths[k], r->raw[k], r->raw_n[k]);
                        if (own[8 + k] == NULL) goto done;
                    }
                }
                for (int k = 6; k < 11; k++) a[k + 1] = own[k];
                na = 12;
            }
        }
        for (Py_ssize_t k = 0; k < na; k++) {
            if (a[k] == NULL) goto done;
        }
        rec = PyObject_Vectorcall(type, a, (size_t)na, NULL);
        if (rec == NULL) goto done;
        ok = PyList_Append(t->lists[r->kind], rec) == 0;
    done:
        for (int k = 0; k < 12; k++) Py_XDECREF(own[k]);
        Py_XDECREF(rec);
        if (!ok) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "_fastread: record not built");
            return -1;
        }
    }
    return 0;
}

static int build(const Chunk *ch, Target *t) {
    Cache cache = {NULL, 0};
    cache.e = PyMem_Calloc(CACHE_SLOTS, sizeof(CEntry)); /* NULL: no cache, each lookup goes to the dict */
    int status = build_records(ch, t, &cache);
    cache_clear(&cache);
    return status;
}

static PyObject *get_typed(PyObject *obj, const char *attr, PyTypeObject *tp) {
    PyObject *v = PyObject_GetAttrString(obj, attr);
    if (v == NULL) return NULL;
    if (tp != NULL && Py_TYPE(v) != tp) {
        Py_DECREF(v);
        PyErr_Format(PyExc_TypeError, "_fastread: builder.%s is not a plain %s", attr, tp->tp_name);
        return NULL;
    }
    return v;
}

/* The order check of _Builder.finish, as the records are appended: builder._order is [last ts of gpu, runtime,
 * cpu, gpu ordered, runtime ordered, cpu ordered] over every record appended so far (gpu and runtime: each ts <= the
 * next; cpu: each ts < the next, as trace.py's _ordered checks them). Updated only for a chunk that was read. */
static int track_order(PyObject *builder, const Chunk *ch) {
    PyObject *st = PyObject_GetAttrString(builder, "_order");
    if (st == NULL) return -1;
    int status = -1;
    if (!PyList_CheckExact(st) || PyList_GET_SIZE(st) != 6) {
        PyErr_SetString(PyExc_TypeError, "_fastread: builder._order is not a list of 6");
        goto out;
    }
    double last[3];
    int ok[3];
    for (int k = 0; k < 3; k++) {
        last[k] = PyFloat_AsDouble(PyList_GET_ITEM(st, k));
        if (last[k] == -1.0 && PyErr_Occurred()) goto out;
        ok[k] = PyObject_IsTrue(PyList_GET_ITEM(st, 3 + k));
        if (ok[k] < 0) goto out;
    }
    for (Py_ssize_t i = 0; i < ch->n; i++) {
        const Pending *r = &ch->recs[i];
        int k = r->kind == KIND_GPU ? 0 : r->kind == KIND_RUNTIME ? 1 : r->kind == KIND_CPU ? 2 : -1;
        if (k < 0) continue;
        double ts = r->ts;
        if (ok[k] && !(k == 2 ? last[k] < ts : last[k] <= ts)) ok[k] = 0;
        last[k] = ts;
    }
    for (int k = 0; k < 3; k++) {
        PyObject *f = PyFloat_FromDouble(last[k]);
        if (f == NULL) goto out;
        if (PyList_SetItem(st, k, f) < 0) goto out; /* steals f */
        PyObject *b = PyBool_FromLong(ok[k]);
        if (PyList_SetItem(st, 3 + k, b) < 0) goto out;
    }
    status = 0;
out:
    Py_DECREF(st);
    return status;
}

/* The parsed chunk between parse() and build(): its pending records point into the buffer, which stays exported
 * (and so alive and unresized) until the capsule goes. */
typedef struct {
    Py_buffer view;
    Chunk ch;
    int built;
} Parsed;

#define PARSED_NAME "kernelscope._fastread.Parsed"

static void parsed_free(PyObject *capsule) {
    Parsed *pd = PyCapsule_GetPointer(capsule, PARSED_NAME);
    if (pd == NULL) return;
    PyMem_RawFree(pd->ch.recs);
    PyBuffer_Release(&pd->view);
    PyMem_Free(pd);
}

/* parse(data, start, end) -> Parsed | None (not handled). The scan of the bytes runs without the GIL (KS_NOGIL). */
static PyObject *parse(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "parse(data, start, end)");
        return NULL;
    }
    if (GpuEvent_t == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_fastread.setup() was not called");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t stop = PyLong_AsSsize_t(args[2]);
    if (stop == -1 && PyErr_Occurred()) return NULL;
    Parsed *pd = PyMem_Calloc(1, sizeof(Parsed));
    if (pd == NULL) return PyErr_NoMemory();
    if (PyObject_GetBuffer(args[0], &pd->view, PyBUF_SIMPLE) < 0) {
        PyMem_Free(pd);
        return NULL;
    }
    if (start < 0 || stop < start || stop > pd->view.len) {
        PyErr_SetString(PyExc_ValueError, "_fastread: chunk out of bounds");
        goto fail;
    }
    Parser ps = {(const unsigned char *)pd->view.buf + start, (const unsigned char *)pd->view.buf + stop};
    int rc;
#ifdef KS_NOGIL
    Py_BEGIN_ALLOW_THREADS
    rc = parse_chunk(&ps, &pd->ch);
    Py_END_ALLOW_THREADS
#else
    rc = parse_chunk(&ps, &pd->ch);
#endif
    if (rc == -2) {
        PyErr_NoMemory();
        goto fail;
    }
    if (rc < 0) {
        PyMem_RawFree(pd->ch.recs);
        PyBuffer_Release(&pd->view);
        PyMem_Free(pd);
        Py_RETURN_NONE;
    }
    PyObject *capsule = PyCapsule_New(pd, PARSED_NAME, parsed_free);
    if (capsule == NULL) goto fail;
    return capsule;
fail:
    PyMem_RawFree(pd->ch.recs);
    PyBuffer_Release(&pd->view);
    PyMem_Free(pd);
    return NULL;
}

/* The records of a parsed chunk appended to the builder's lists; (total, skipped). */
static PyObject *build_chunk(PyObject *builder, const Chunk *ch) {
    PyObject *result = NULL;
    Target t;
    memset(&t, 0, sizeof t);
    const char *lists[4] = {"gpu", "runtime", "cpu", "gpu_ann"};
    int kinds[4] = {KIND_GPU, KIND_RUNTIME, KIND_CPU, KIND_ANN};
    for (int k = 0; k < 4; k++) {
        if ((t.lists[kinds[k]] = get_typed(builder, lists[k], &PyList_Type)) == NULL) goto out;
    }
    if ((t.strs = get_typed(builder, "_strs", &PyDict_Type)) == NULL) goto out;
    if ((t.ids = get_typed(builder, "_ids", &PyDict_Type)) == NULL) goto out;
    if ((t.durs = get_typed(builder, "_durs", &PyDict_Type)) == NULL) goto out;
    if ((t.dims = get_typed(builder, "_dims", &PyDict_Type)) == NULL) goto out;
    if ((t.types = get_typed(builder, "_types", &PyDict_Type)) == NULL) goto out;
    if ((t.dims_of = get_typed(builder, "_dims_of", NULL)) == NULL) goto out;
    if ((t.types_of = get_typed(builder, "_types_of", NULL)) == NULL) goto out;
    if (build(ch, &t) < 0) goto out;
    if (track_order(builder, ch) < 0) goto out;
    result = Py_BuildValue("(nn)", ch->total, ch->skipped);
out:
    for (int k = 0; k < 4; k++) Py_XDECREF(t.lists[k]);
    Py_XDECREF(t.strs);
    Py_XDECREF(t.ids);
    Py_XDECREF(t.durs);
    Py_XDECREF(t.dims);
    Py_XDECREF(t.types);
    Py_XDECREF(t.dims_of);
    Py_XDECREF(t.types_of);
    return result;
}

/* build(builder, parsed) -> (total, skipped): once per Parsed. */
static PyObject *build_parsed(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "build(builder, parsed)");
        return NULL;
    }
    Parsed *pd = PyCapsule_GetPointer(args[1], PARSED_NAME);
    if (pd == NULL) return NULL;
    if (pd->built) {
        PyErr_SetString(PyExc_ValueError, "_fastread: this chunk was built already");
        return NULL;
    }
    pd->built = 1;
    return build_chunk(args[0], &pd->ch);
}

/* add_chunk(builder, data, start, end) -> (total, skipped) | None: parse() and build() in one call. */
static PyObject *add_chunk(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "add_chunk(builder, data, start, end)");
        return NULL;
    }
    PyObject *parsed = parse(self, args + 1, 3);
    if (parsed == NULL || parsed == Py_None) return parsed;
    Parsed *pd = PyCapsule_GetPointer(parsed, PARSED_NAME);
    PyObject *result = pd == NULL ? NULL : build_chunk(args[0], &pd->ch);
    if (pd != NULL) pd->built = 1;
    Py_DECREF(parsed);
    return result;
}

static int as_int(PyObject *o, int *out) {
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = (int)v;
    return 0;
}

/* setup(GpuEvent, RuntimeEvent, CpuEvent, kind_of_cat, cat_const, other_phases, (GPU, RUNTIME, CPU, ANN)) */
static PyObject *setup(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *g, *r, *c, *kind_of, *cat_const, *phs;
    int kg, kr, kc, ka;
    if (!PyArg_ParseTuple(args, "OOOO!O!O(iiii)", &g, &r, &c, &PyDict_Type, &kind_of, &PyDict_Type, &cat_const, &phs,
                          &kg, &kr, &kc, &ka))
        return NULL;
    /* Called again (kernelscope.trace reloaded): the new tables replace the old ones, whose objects are kept
     * alive on purpose (a call in progress on another thread may still use them). */
    if (PyDict_Size(kind_of) > MAX_CATS) {
        PyErr_SetString(PyExc_ValueError, "too many categories");
        return NULL;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int nc = 0;
    while (PyDict_Next(kind_of, &pos, &key, &value)) {
        if (!PyUnicode_Check(key)) continue;
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(key, &n);
        if (s == NULL) return NULL;
        PyObject *cnst = PyDict_GetItemWithError(cat_const, key);
        if (cnst == NULL) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "category without a constant");
            return NULL;
        }
        int kind;
        if (as_int(value, &kind) < 0) return NULL;
        char *copy = PyMem_Malloc((size_t)n + 1);
        if (copy == NULL) return PyErr_NoMemory();
        memcpy(copy, s, (size_t)n + 1);
        cats[nc].s = copy;
        cats[nc].n = n;
        cats[nc].kind = kind;
        Py_INCREF(cnst);
        cats[nc].cnst = cnst;
        nc++;
    }
    PyObject *seq = PySequence_Fast(phs, "phases must be a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t np = PySequence_Fast_GET_SIZE(seq);
    if (np > MAX_PHASES) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many phases");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < np; i++) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(PySequence_Fast_GET_ITEM(seq, i), &n);
        if (s == NULL || n >= 8 || n < 1) {
            Py_DECREF(seq);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad phase");
            return NULL;
        }
        memcpy(phases[i].s, s, (size_t)n);
        phases[i].n = n;
    }
    Py_DECREF(seq);
    KeyName cat_names[MAX_CATS];
    for (int i = 0; i < nc; i++) {
        cat_names[i].s = cats[i].s;
        cat_names[i].n = cats[i].n;
        cat_names[i].id = i;
    }
    KeyTable ck;
    key_table_init(&ck, cat_names, nc);
    unsigned char p1[256] = {0};
    for (Py_ssize_t i = 0; i < np; i++) {
        if (phases[i].n == 1) p1[(unsigned char)phases[i].s[0]] = 1;
    }
    memcpy(&cat_keys, &ck, sizeof ck);
    memcpy(phase1, p1, sizeof p1);
    n_phases = (int)np;
    n_cats = nc;
    if (kg < 0 || kg > 3 || kr < 0 || kr > 3 || kc < 0 || kc > 3 || ka < 0 || ka > 3) {
        PyErr_SetString(PyExc_ValueError, "kinds must be 0..3");
        return NULL;
    }
#ifdef KS_NOGIL
    if (c_locale == (locale_t)0) {
        c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
        if (c_locale == (locale_t)0) return PyErr_SetFromErrno(PyExc_OSError);
    }
#endif
    KIND_GPU = kg;
    KIND_RUNTIME = kr;
    KIND_CPU = kc;
    KIND_ANN = ka;
    Py_INCREF(g);
    Py_INCREF(r);
    Py_INCREF(c);
    RuntimeEvent_t = r;
    CpuEvent_t = c;
    GpuEvent_t = g;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"add_chunk", (PyCFunction)(void (*)(void))add_chunk, METH_FASTCALL,
     "add_chunk(builder, data, start, end): append one chunk's records; (total, skipped), or None: not handled"},
    {"parse", (PyCFunction)(void (*)(void))parse, METH_FASTCALL,
     "parse(data, start, end): the chunk parsed (without the GIL where built with glibc), or None: not handled"},
    {"build", (PyCFunction)(void (*)(void))build_parsed, METH_FASTCALL,
     "build(builder, parsed): append a parsed chunk's records; (total, skipped)"},
    {"setup", setup, METH_VARARGS, "setup(GpuEvent, RuntimeEvent, CpuEvent, kind_of_cat, cat_const, phases, kinds)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kernelscope._fastread", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastread(void) {
    key_table_init(&event_keys, EVENT_KEYS, (int)(sizeof EVENT_KEYS / sizeof EVENT_KEYS[0]));
    key_table_init(&args_keys, ARGS_KEYS, (int)(sizeof ARGS_KEYS / sizeof ARGS_KEYS[0]));
#ifdef KS_SWAR_LE
    kineto_order_init();
#endif
    return PyModule_Create(&module);
}
