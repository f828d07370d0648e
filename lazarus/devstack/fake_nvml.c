/* A scripted stand-in for libnvidia-ml.so.1, so the real pynvml ctypes code runs on GPU-less machines.
 *
 * Shipped with the dev stack (`lazarus dev up` runs one node agent per fake node on it) and used by the
 * tests; built by lazarus/devstack/fake_nvml.py with: gcc -shared -fPIC -O2 -Wall -o libnvidia-ml.so.1 fake_nvml.c
 *
 * Script (both files are re-read on every call, so a test can change them between polls):
 *   FAKE_NVML_STATE  file of "<gpu index | *> <key> <value>" lines; the last matching line wins.
 *     keys: gpus (count, with "*"), init_error (NVML return code for nvmlInit), ecc_sbe_vol, ecc_dbe_vol,
 *           ecc_sbe_agg, ecc_dbe_agg, retired_sbe, retired_dbe (page counts), retired_pending,
 *           remap_corr, remap_unc, remap_pending, remap_failure, clocks_reasons (bitmask),
 *           nvlink_links (active link count; 0 = NVLink not supported), nvlink.<counter>.<link> (error count),
 *           recovery_action, lost (1 = every call on this GPU returns GPU_IS_LOST),
 *           unsupported <nvml function name> (that call returns NOT_SUPPORTED).
 *   FAKE_NVML_EVENTS file of "<gpu index> <xid>" lines; nvmlEventSetWait_v2 returns the first line and removes it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OK 0
#define ERR_INVALID_ARGUMENT 2
#define ERR_NOT_SUPPORTED 3
#define ERR_INSUFFICIENT_SIZE 7
#define ERR_TIMEOUT 10
#define ERR_GPU_IS_LOST 15
#define MAX_GPUS 64

typedef struct { int idx; } fake_device;
typedef fake_device *nvmlDevice_t;
typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType, eventData;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;
typedef struct {
    uint32_t fieldId, scopeId;
    int64_t timestamp, latencyUsec;
    int valueType, nvmlReturn;
    union { double d; unsigned long long ull; } value;
} nvmlFieldValue_t;

static fake_device devices[MAX_GPUS];

/* The value of the last line matching (gpu or "*", key); dflt when none matches. */
static long long lookup(int gpu, const char *key, long long dflt) {
    const char *path = getenv("FAKE_NVML_STATE");
    FILE *f = path ? fopen(path, "r") : NULL;
    char who[16], k[96], v[96], line[256];
    long long out = dflt;
    if (!f) return dflt;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%15s %95s %95s", who, k, v) != 3 || strcmp(k, key) != 0) continue;
        if (strcmp(who, "*") == 0 || atoi(who) == gpu) out = strtoll(v, NULL, 0);
    }
    fclose(f);
    return out;
}

static int is_unsupported(int gpu, const char *fn) {
    const char *path = getenv("FAKE_NVML_STATE");
    FILE *f = path ? fopen(path, "r") : NULL;
    char who[16], k[96], v[96], line[256];
    int hit = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%15s %95s %95s", who, k, v) != 3) continue;
        if (strcmp(k, "unsupported") == 0 && strcmp(v, fn) == 0 && (strcmp(who, "*") == 0 || atoi(who) == gpu)) hit = 1;
    }
    fclose(f);
    return hit;
}

/* Every device call starts here: a lost GPU or a scripted NotSupported ends it early. */
#define GUARD(dev, fn)                                                  \
    do {                                                                \
        int g_ = (dev)->idx;                                            \
        if (lookup(g_, "lost", 0)) return ERR_GPU_IS_LOST;              \
        if (is_unsupported(g_, fn)) return ERR_NOT_SUPPORTED;           \
    } while (0)

static unsigned gpu_count(void) { return (unsigned)lookup(-1, "gpus", 2); }

int nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    for (int i = 0; i < MAX_GPUS; i++) devices[i].idx = i;
    return (int)lookup(-1, "init_error", 0);
}
int nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
int nvmlShutdown(void) { return OK; }

const char *nvmlErrorString(int r) {
    switch (r) {
    case OK: return "Success";
    case ERR_INVALID_ARGUMENT: return "Invalid Argument";
    case ERR_NOT_SUPPORTED: return "Not Supported";
    case 9: return "Driver Not Loaded";
    case ERR_TIMEOUT: return "Timeout";
    case ERR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
    }
}

int nvmlSystemGetDriverVersion(char *buf, unsigned n) { snprintf(buf, n, "999.99-fake"); return OK; }
int nvmlDeviceGetCount_v2(unsigned *count) { *count = gpu_count(); return OK; }

int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *dev) {
    if (i >= gpu_count() || i >= MAX_GPUS) return ERR_INVALID_ARGUMENT;
    *dev = &devices[i];
    return OK;
}

int nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned n) {
    /* UUIDs stay readable on a lost GPU so the agent can still name it. */
    snprintf(buf, n, "GPU-fake-%04d", d->idx);
    return OK;
}

int nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned n) {
    GUARD(d, "nvmlDeviceGetName");
    snprintf(buf, n, "NVIDIA H100 80GB HBM3");
    return OK;
}

int nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int error_type, int counter_type, unsigned long long *count) {
    static const char *keys[2][2] = {{"ecc_sbe_vol", "ecc_sbe_agg"}, {"ecc_dbe_vol", "ecc_dbe_agg"}};
    GUARD(d, "nvmlDeviceGetTotalEccErrors");
    if (error_type < 0 || error_type > 1 || counter_type < 0 || counter_type > 1) return ERR_INVALID_ARGUMENT;
    *count = (unsigned long long)lookup(d->idx, keys[error_type][counter_type], 0);
    return OK;
}

int nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause, unsigned *count, unsigned long long *addresses) {
    GUARD(d, "nvmlDeviceGetRetiredPages");
    unsigned have = (unsigned)lookup(d->idx, cause == 1 ? "retired_dbe" : "retired_sbe", 0);
    if (addresses == NULL || *count < have) { *count = have; return have ? ERR_INSUFFICIENT_SIZE : OK; }
    for (unsigned k = 0; k < have; k++) addresses[k] = 0x1000ULL * (k + 1);
    *count = have;
    return OK;
}

int nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int *pending) {
    GUARD(d, "nvmlDeviceGetRetiredPagesPendingStatus");
    *pending = (int)lookup(d->idx, "retired_pending", 0);
    return OK;
}

int nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failure) {
    GUARD(d, "nvmlDeviceGetRemappedRows");
    *corr = (unsigned)lookup(d->idx, "remap_corr", 0);
    *unc = (unsigned)lookup(d->idx, "remap_unc", 0);
    *pending = (unsigned)lookup(d->idx, "remap_pending", 0);
    *failure = (unsigned)lookup(d->idx, "remap_failure", 0);
    return OK;
}

int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *reasons) {
    GUARD(d, "nvmlDeviceGetCurrentClocksEventReasons");
    *reasons = (unsigned long long)lookup(d->idx, "clocks_reasons", 0);
    return OK;
}

int nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, unsigned *active) {
    GUARD(d, "nvmlDeviceGetNvLinkState");
    long long links = lookup(d->idx, "nvlink_links", 0);
    if (links == 0) return ERR_NOT_SUPPORTED;
    if (link >= (unsigned)links) return ERR_INVALID_ARGUMENT;
    *active = 1;
    return OK;
}

int nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned link, int counter, unsigned long long *value) {
    char key[64];
    GUARD(d, "nvmlDeviceGetNvLinkErrorCounter");
    snprintf(key, sizeof key, "nvlink.%d.%u", counter, link);
    *value = (unsigned long long)lookup(d->idx, key, 0);
    return OK;
}

int nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t *values) {
    GUARD(d, "nvmlDeviceGetFieldValues");
    for (int k = 0; k < n; k++) {
        values[k].valueType = 3; /* unsigned long long */
        if (values[k].fieldId == 230) { /* NVML_FI_DEV_GET_GPU_RECOVERY_ACTION */
            long long action = lookup(d->idx, "recovery_action", 0);
            values[k].nvmlReturn = action < 0 ? ERR_NOT_SUPPORTED : OK;
            values[k].value.ull = action < 0 ? 0 : (unsigned long long)action;
        } else {
            values[k].nvmlReturn = ERR_NOT_SUPPORTED;
        }
    }
    return OK;
}

int nvmlEventSetCreate(void **set) { *set = malloc(8); return OK; }
int nvmlEventSetFree(void *set) { free(set); return OK; }

int nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long *types) {
    GUARD(d, "nvmlDeviceGetSupportedEventTypes");
    *types = 0x8 | 0x2 | 0x1 | 0x10;
    return OK;
}

int nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, void *set) {
    (void)types; (void)set;
    GUARD(d, "nvmlDeviceRegisterEvents");
    return OK;
}

/* Pops the first "<gpu> <xid>" line of FAKE_NVML_EVENTS; sleeps the timeout and times out when none is left. */
int nvmlEventSetWait_v2(void *set, nvmlEventData_t *event, unsigned timeout_ms) {
    const char *path = getenv("FAKE_NVML_EVENTS");
    FILE *f = path ? fopen(path, "r") : NULL;
    char rest[8192] = "", line[256];
    int gpu = -1, xid = 0, found = 0;
    size_t used = 0;
    (void)set;
    if (f) {
        while (fgets(line, sizeof line, f)) {
            if (!found && sscanf(line, "%d %d", &gpu, &xid) == 2) { found = 1; continue; }
            size_t len = strlen(line);
            if (used + len < sizeof rest) { memcpy(rest + used, line, len); used += len; rest[used] = 0; }
        }
        fclose(f);
    }
    if (found && gpu >= 0 && gpu < MAX_GPUS) {
        f = fopen(path, "w");
        if (f) { fputs(rest, f); fclose(f); }
        memset(event, 0, sizeof *event);
        event->device = &devices[gpu];
        event->eventType = 0x8; /* nvmlEventTypeXidCriticalError */
        event->eventData = (unsigned long long)xid;
        return OK;
    }
    usleep(timeout_ms * 1000);
    return ERR_TIMEOUT;
}
