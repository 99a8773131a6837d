/*
 * The send floors of bench/bus.js in C, with the bus's own syscalls beside them and no other work,
 * so the part of the bus's cost that is its protocol can be told from the part that is JavaScript.
 * bench/bus.js compiles and runs it when a C compiler is present:
 *   bus-floor <dir> <runs> <message bytes>  ->  one JSON line of medians in ms
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmp_dir[4096], new_dir[4096], sent_dir[4096];
static char *message;
static size_t message_size;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void must(int ok, const char *what) {
  if (!ok) {
    perror(what);
    exit(1);
  }
}

static void fsync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY);
  must(fd >= 0 && fsync(fd) == 0, dir);
  close(fd);
}

/* A temp file with every byte written and fsynced. */
static void write_temp(const char *path) {
  int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
  must(fd >= 0 && write(fd, message, message_size) == (ssize_t)message_size && fsync(fd) == 0, path);
  close(fd);
}

/* temp file + fsync, rename into new/, fsync new/: the least a durable delivery does */
static void durable_floor(int i) {
  char tmp[4200], dest[4200];
  snprintf(tmp, sizeof tmp, "%s/f%d", tmp_dir, i);
  snprintf(dest, sizeof dest, "%s/f%d.md", new_dir, i);
  write_temp(tmp);
  must(rename(tmp, dest) == 0, dest);
  fsync_dir(new_dir);
}

/* temp file + fsync, fsync tmp/, rename: new/ is never fsynced */
static void tmp_synced(int i) {
  char tmp[4200], dest[4200];
  snprintf(tmp, sizeof tmp, "%s/t%d", tmp_dir, i);
  snprintf(dest, sizeof dest, "%s/t%d.md", new_dir, i);
  write_temp(tmp);
  fsync_dir(tmp_dir);
  must(rename(tmp, dest) == 0, dest);
}

/* what troupe's send does: link into new/ (no replace), the attempt renamed into sent/, fsync new/ */
static void bus_syscalls(int i) {
  char tmp[4200], dest[4200], sent[4200];
  snprintf(tmp, sizeof tmp, "%s/.b%d.md.tmp", tmp_dir, i);
  snprintf(dest, sizeof dest, "%s/b%d.md", new_dir, i);
  snprintf(sent, sizeof sent, "%s/b%d.md", sent_dir, i);
  write_temp(tmp);
  must(link(tmp, dest) == 0, dest);
  must(rename(tmp, sent) == 0, sent);
  fsync_dir(new_dir);
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: bus-floor <dir> <runs> <message bytes>\n");
    return 2;
  }
  int runs = atoi(argv[2]) / 10 * 10;
  message_size = (size_t)atol(argv[3]);
  message = malloc(message_size);
  memset(message, 'x', message_size);
  snprintf(tmp_dir, sizeof tmp_dir, "%s/tmp", argv[1]);
  snprintf(new_dir, sizeof new_dir, "%s/new", argv[1]);
  snprintf(sent_dir, sizeof sent_dir, "%s/sent", argv[1]);
  must(mkdir(tmp_dir, 0700) == 0 && mkdir(new_dir, 0700) == 0 && mkdir(sent_dir, 0700) == 0, argv[1]);

  void (*sides[3])(int) = {durable_floor, tmp_synced, bus_syscalls};
  const char *names[3] = {"floor", "tmpSynced", "busSyscalls"};
  double *times[3];
  for (int s = 0; s < 3; s++) times[s] = malloc(sizeof(double) * runs);
  for (int i = 0; i < 20; i++)
    for (int s = 0; s < 3; s++) sides[s](runs + i); /* warm-up, names past the timed ones */
  /* interleaved in blocks of 10, as in bench/bus.js */
  for (int i = 0; i < runs; i += 10)
    for (int s = 0; s < 3; s++)
      for (int k = 0; k < 10; k++) {
        double t0 = now_ms();
        sides[s](i + k);
        times[s][i + k] = now_ms() - t0;
      }
  printf("{");
  for (int s = 0; s < 3; s++) {
    qsort(times[s], runs, sizeof(double), by_value);
    printf("%s\"%s\": %.6f", s ? ", " : "", names[s], times[s][runs / 2]);
  }
  printf("}\n");
  return 0;
}
