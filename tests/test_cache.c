/* test_cache.c — the compile cache's files (src/code/cache.c): the key hash,
 * entries written and read back, every way an entry can be damaged
 * (ignored, never trusted), an unwritable directory, `cache clean`, where
 * the directory is, and processes writing one entry at the same time. */
#include "cudag.h"
#include "base/alloc.h"
#include "code/cache.h"

#include <stddef.h>
#include <stdint.h>
#include "common.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];

static int make_dir(void **state)
{
    (void)state;
    return tmkdir_in(dir, sizeof dir, "cache");
}

static int remove_dir(void **state)
{
    (void)state;
    return trm_tree(dir);
}

static void key_of(const char *s, char key[33])
{
    cudag__hash h;
    cudag__hash_init(&h);
    cudag__hash_part(&h, s, strlen(s));
    cudag__hash_hex(&h, key);
}

static void cache_hash_tells_inputs_apart(void **state)
{
    (void)state;
    char k1[33], k2[33], k3[33];
    key_of("abc", k1);
    key_of("abc", k2);
    assert_string_equal(k1, k2);
    assert_int_equal(strlen(k1), 32);
    key_of("abd", k3);
    assert_string_not_equal(k1, k3);
    /* Parts are delimited: ("ab","c") is not ("a","bc"). */
    cudag__hash h1, h2;
    cudag__hash_init(&h1);
    cudag__hash_init(&h2);
    cudag__hash_part(&h1, "ab", 2);
    cudag__hash_part(&h1, "c", 1);
    cudag__hash_part(&h2, "a", 1);
    cudag__hash_part(&h2, "bc", 2);
    cudag__hash_hex(&h1, k1);
    cudag__hash_hex(&h2, k2);
    assert_string_not_equal(k1, k2);
    /* One bit anywhere in a long input changes it; so does the length. */
    char buf[4096];
    memset(buf, 'x', sizeof buf);
    cudag__hash_init(&h1);
    cudag__hash_part(&h1, buf, sizeof buf);
    cudag__hash_hex(&h1, k1);
    for (size_t i = 0; i < sizeof buf; i += 97) {
        buf[i] ^= 1;
        cudag__hash_init(&h2);
        cudag__hash_part(&h2, buf, sizeof buf);
        cudag__hash_hex(&h2, k2);
        assert_string_not_equal(k1, k2);
        buf[i] ^= 1;
    }
    cudag__hash_init(&h2);
    cudag__hash_part(&h2, buf, sizeof buf - 1);
    cudag__hash_hex(&h2, k2);
    assert_string_not_equal(k1, k2);
}

static void cache_round_trip(void **state)
{
    (void)state;
    char key[33];
    key_of("round trip", key);
    void *data;
    size_t len;
    assert_int_equal(cudag__cache_get(dir, key, &data, &len), CUDAG_EIO);
    assert_null(data);
    static const char payload[] = "machine code, honestly";
    cudag_error e;
    assert_int_equal(cudag__cache_put(dir, key, payload, sizeof payload, &e),
                     CUDAG_OK);
    assert_int_equal(cudag__cache_get(dir, key, &data, &len), CUDAG_OK);
    assert_int_equal(len, sizeof payload);
    assert_memory_equal(data, payload, len);
    cudag__free(data);
    /* An empty payload is an entry too. */
    key_of("empty", key);
    assert_int_equal(cudag__cache_put(dir, key, "", 0, &e), CUDAG_OK);
    assert_int_equal(cudag__cache_get(dir, key, &data, &len), CUDAG_OK);
    assert_int_equal(len, 0);
    cudag__free(data);
}

/* Replaces the entry's file with `bytes` and expects a miss. */
static void expect_miss(const char *key, const void *bytes, size_t n)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s.cudagc", dir, key);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
    void *data = (void *)1;
    size_t len = 1;
    assert_int_equal(cudag__cache_get(dir, key, &data, &len), CUDAG_EIO);
    assert_null(data);
    assert_int_equal(len, 0);
}

static void cache_damaged_entries_are_misses(void **state)
{
    (void)state;
    char key[33], other[33], path[400];
    key_of("damaged", key);
    key_of("other", other);
    char payload[300];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (char)i;
    cudag_error e;
    assert_int_equal(cudag__cache_put(dir, key, payload, sizeof payload, &e),
                     CUDAG_OK);
    snprintf(path, sizeof path, "%s/%s.cudagc", dir, key);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t whole[400];
    size_t n = fread(whole, 1, sizeof whole, f);
    fclose(f);
    assert_int_equal(n, 80 + sizeof payload);
    /* Every truncation, including an empty file. */
    for (size_t len = 0; len < n; len += 7)
        expect_miss(key, whole, len);
    /* One byte changed anywhere: magic, length, checksum, key, payload. */
    for (size_t i = 0; i < n; i += 5) {
        whole[i] ^= 0x40;
        expect_miss(key, whole, n);
        whole[i] ^= 0x40;
    }
    /* A valid entry under another key's name. */
    assert_int_equal(cudag__cache_put(dir, other, payload, 10, &e), CUDAG_OK);
    char opath[400];
    snprintf(opath, sizeof opath, "%s/%s.cudagc", dir, other);
    assert_int_equal(rename(opath, path), 0);
    void *data;
    size_t len;
    assert_int_equal(cudag__cache_get(dir, key, &data, &len), CUDAG_EIO);
    /* Garbage, and a directory where the file should be. */
    static const char garbage[] = "garbage garbage garbage garbage garbage "
                                  "garbage garbage garbage garbage garbage "
                                  "garbage garbage";
    expect_miss(key, garbage, sizeof garbage - 1);
    unlink(path);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(cudag__cache_get(dir, key, &data, &len), CUDAG_EIO);
    rmdir(path);
    /* After a miss the entry is written again and read back. */
    assert_int_equal(cudag__cache_put(dir, key, payload, sizeof payload, &e),
                     CUDAG_OK);
    assert_int_equal(cudag__cache_get(dir, key, &data, &len), CUDAG_OK);
    assert_memory_equal(data, payload, sizeof payload);
    cudag__free(data);
}

static void cache_unwritable_dir_is_an_error_value(void **state)
{
    (void)state;
    /* A file where a directory must be: unwritable even for root. */
    char file[300], sub[400];
    snprintf(file, sizeof file, "%s/plainfile", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(sub, sizeof sub, "%s/cache", file);
    char key[33];
    key_of("unwritable", key);
    cudag_error e;
    assert_int_equal(cudag__cache_put(sub, key, "x", 1, &e), CUDAG_EIO);
    char want[600];
    snprintf(want, sizeof want,
             "cannot write the compile cache in '%s': Not a directory", sub);
    assert_string_equal(e.message, want);
    assert_int_equal(e.line, 0);
    void *data;
    size_t len;
    assert_int_equal(cudag__cache_get(sub, key, &data, &len), CUDAG_EIO);
    /* Directories are made as needed. */
    snprintf(sub, sizeof sub, "%s/a/b/c", dir);
    assert_int_equal(cudag__cache_put(sub, key, "x", 1, &e), CUDAG_OK);
    assert_int_equal(cudag__cache_get(sub, key, &data, &len), CUDAG_OK);
    cudag__free(data);
}

static void cache_clean_removes_only_entries(void **state)
{
    (void)state;
    char sub[400], path[500];
    snprintf(sub, sizeof sub, "%s/clean", dir);
    cudag_error e;
    unsigned removed = 99;
    /* A cache that was never made is empty. */
    assert_int_equal(cudag__cache_clean(sub, &removed, &e), CUDAG_OK);
    assert_int_equal(removed, 0);
    char key[33];
    for (int i = 0; i < 3; i++) {
        char s[8] = {'k', (char)('0' + i)};
        key_of(s, key);
        assert_int_equal(cudag__cache_put(sub, key, s, 2, &e), CUDAG_OK);
    }
    snprintf(path, sizeof path, "%s/.tmp-%s-1-2-3", sub, key);  /* a leftover */
    FILE *f = fopen(path, "w");
    fclose(f);
    snprintf(path, sizeof path, "%s/notes.txt", sub);           /* not ours */
    f = fopen(path, "w");
    fclose(f);
    assert_int_equal(cudag__cache_clean(sub, &removed, &e), CUDAG_OK);
    assert_int_equal(removed, 4);
    assert_int_equal(access(path, F_OK), 0);
    void *data;
    size_t len;
    assert_int_equal(cudag__cache_get(sub, key, &data, &len), CUDAG_EIO);
}

static void cache_dir_follows_the_environment(void **state)
{
    (void)state;
    char buf[300];
    char *own = getenv("CUDAG_CACHE_DIR");
    char *saved = own ? strdup(own) : NULL;
    unsetenv("CUDAG_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    assert_true(cudag__cache_dir(buf, sizeof buf));
    assert_string_equal(buf, "/x/cache/cudag");
    setenv("XDG_CACHE_HOME", "relative", 1);     /* ignored, per the spec */
    setenv("HOME", "/home/u", 1);
    assert_true(cudag__cache_dir(buf, sizeof buf));
    assert_string_equal(buf, "/home/u/.cache/cudag");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    assert_false(cudag__cache_dir(buf, sizeof buf));
    assert_string_equal(buf, "");
    setenv("CUDAG_CACHE_DIR", "/own", 1);
    assert_true(cudag__cache_dir(buf, sizeof buf));
    assert_string_equal(buf, "/own");
    assert_false(cudag__cache_dir(buf, 3));     /* does not fit */
    if (saved)
        setenv("CUDAG_CACHE_DIR", saved, 1);
    else
        unsetenv("CUDAG_CACHE_DIR");
    free(saved);
}

/* Four processes write the same key, each its own payload, while a fifth
 * reads: every read is a miss or one whole payload, and the entry left is
 * one of them. */
static void cache_concurrent_writers(void **state)
{
    (void)state;
    char sub[400], key[33];
    snprintf(sub, sizeof sub, "%s/race", dir);
    key_of("race", key);
    enum { WRITERS = 4, ROUNDS = 300, SIZE = 64 << 10 };
    pid_t pids[WRITERS + 1];
    for (int w = 0; w <= WRITERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] > 0)
            continue;
        static uint8_t buf[SIZE];
        int bad = 0;
        for (int r = 0; r < ROUNDS && !bad; r++) {
            if (w < WRITERS) {
                memset(buf, 'A' + w, sizeof buf);
                cudag_error e;
                bad = cudag__cache_put(sub, key, buf, sizeof buf, &e) != CUDAG_OK;
            } else {
                void *data;
                size_t len;
                if (cudag__cache_get(sub, key, &data, &len) != CUDAG_OK)
                    continue;
                const uint8_t *d = data;
                bad = len != SIZE || d[0] < 'A' || d[0] >= 'A' + WRITERS;
                for (size_t i = 1; i < len && !bad; i++)
                    bad = d[i] != d[0];
                cudag__free(data);
            }
        }
        _exit(bad);
    }
    for (int w = 0; w <= WRITERS; w++) {
        int st;
        assert_int_equal(waitpid(pids[w], &st, 0), pids[w]);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
    }
    void *data;
    size_t len;
    assert_int_equal(cudag__cache_get(sub, key, &data, &len), CUDAG_OK);
    assert_int_equal(len, SIZE);
    cudag__free(data);
    unsigned removed;
    cudag_error e;
    /* No temporary file was left behind: the entry is all there is. */
    assert_int_equal(cudag__cache_clean(sub, &removed, &e), CUDAG_OK);
    assert_int_equal(removed, 1);
}

static void cache_oom(void **state)
{
    (void)state;
    char key[33];
    key_of("oom", key);
    cudag_error e;
    assert_int_equal(cudag__cache_put(dir, key, "abc", 3, &e), CUDAG_OK);
    long base = cudag__alloc_live();
    void *data;
    size_t len;
    cudag__alloc_fail_after(1);
    assert_int_equal(cudag__cache_get(dir, key, &data, &len), CUDAG_ENOMEM);
    cudag__alloc_fail_after(-1);
    assert_null(data);
    assert_int_equal(cudag__alloc_live(), base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cache_hash_tells_inputs_apart),
        cmocka_unit_test(cache_round_trip),
        cmocka_unit_test(cache_damaged_entries_are_misses),
        cmocka_unit_test(cache_unwritable_dir_is_an_error_value),
        cmocka_unit_test(cache_clean_removes_only_entries),
        cmocka_unit_test(cache_dir_follows_the_environment),
        cmocka_unit_test(cache_concurrent_writers),
        cmocka_unit_test(cache_oom),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
