/* The C API end to end, as a C program sees it (run by tests/c_program.rs):
 * argv[1] = the port of a `udt serve` daemon on 127.0.0.1 (no keys, --allow-overwrite),
 * argv[2] = a local file to upload, argv[3] = a local directory to download into.
 * Prints one line per check and exits 1 on the first failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "udt_capi.h"

#define PAYLOAD (1u << 20)

static int checks;

#define CHECK(cond, what)                                                                  \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      fprintf(stderr, "FAIL %s:%d: %s (last error %d: %s)\n", __FILE__, __LINE__, what,    \
              udtc_last_error_code(), udtc_last_error());                                  \
      exit(1);                                                                             \
    }                                                                                      \
    checks++;                                                                              \
    printf("ok %s\n", what);                                                               \
  } while (0)

static void misuse_is_reported(void) {
  uint8_t byte = 0;
  CHECK(udtc_send(NULL, &byte, 1) == UDTC_ERR_INVALID, "send on NULL is UDTC_ERR_INVALID");
  CHECK(strstr(udtc_last_error(), "NULL") != NULL, "the message names the NULL");
  CHECK(udtc_connect(NULL, 1, NULL) == NULL, "connect to a NULL host gives NULL");
  CHECK(udtc_close(NULL) == UDTC_ERR_INVALID, "close(NULL) is UDTC_ERR_INVALID");
  UdtcOptions *opts = udtc_options_new();
  CHECK(udtc_options_set(opts, 999, 1) == UDTC_ERR_INVALID, "an unknown option is refused");
  CHECK(udtc_options_set(opts, UDTC_OPT_MSS, 10) == UDTC_ERR_INVALID, "MSS 10 is refused");
  CHECK(udtc_options_set_congestion(opts, "nonsense") == UDTC_ERR_INVALID,
        "an unknown controller is refused");
  udtc_options_free(opts);
}

static void stream_round_trip(void) {
  UdtcOptions *opts = udtc_options_new();
  CHECK(udtc_options_set(opts, UDTC_OPT_SEND_BUFFER, 4 << 20) == UDTC_OK, "set UDT_SNDBUF");
  CHECK(udtc_options_set(opts, UDTC_OPT_RECV_TIMEOUT_MS, 10000) == UDTC_OK, "set UDT_RCVTIMEO");
  UdtcListener *listener = udtc_listen("127.0.0.1", 0, opts);
  CHECK(listener != NULL, "listen on 127.0.0.1:0");
  int port = udtc_listener_port(listener);
  CHECK(port > 0, "the listener has a port");
  UdtcStream *client = udtc_connect("127.0.0.1", (uint16_t)port, opts);
  CHECK(client != NULL, "connect over loopback");
  UdtcStream *server = udtc_accept(listener);
  CHECK(server != NULL, "accept");

  uint8_t *out = malloc(PAYLOAD), *in = malloc(PAYLOAD);
  for (size_t i = 0; i < PAYLOAD; i++) out[i] = (uint8_t)(i * 31 + (i >> 11));
  CHECK(udtc_send_all(client, out, PAYLOAD) == UDTC_OK, "send 1 MiB");
  size_t got = 0;
  while (got < PAYLOAD) {
    int64_t n = udtc_recv(server, in + got, PAYLOAD - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  CHECK(got == PAYLOAD && memcmp(in, out, PAYLOAD) == 0, "receive the same 1 MiB");
  CHECK(udtc_flush(client) == UDTC_OK, "flush: everything acknowledged");

  UdtcStats sent, received;
  CHECK(udtc_stats(client, &sent) == UDTC_OK, "stats of the sender");
  CHECK(sent.bytes_sent >= PAYLOAD && sent.packets_sent > 0 && sent.mss > 0,
        "the sender counted its bytes and packets");
  CHECK(udtc_stats(server, &received) == UDTC_OK, "stats of the receiver");
  CHECK(received.bytes_delivered == PAYLOAD && received.acks_sent > 0,
        "the receiver delivered exactly the payload and acknowledged it");
  CHECK(udtc_stats(client, NULL) == UDTC_ERR_INVALID, "stats into NULL is refused");

  CHECK(udtc_close(client) == UDTC_OK, "close the client");
  uint8_t byte;
  CHECK(udtc_recv(server, &byte, 1) == 0, "the server sees the end of the stream");
  CHECK(udtc_close(server) == UDTC_OK, "close the server side");
  udtc_listener_close(listener);
  udtc_options_free(opts);
  free(out);
  free(in);
}

struct progress {
  int calls;
  uint64_t done, total;
};

static void on_progress(void *user, uint64_t done, uint64_t total) {
  struct progress *p = user;
  p->calls++;
  p->done = done;
  p->total = total;
}

static void copy_both_ways(const char *port, const char *file, const char *dir) {
  char url[512], back[512];
  const char *name = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
  UdtcCopyOptions options = udtc_copy_options_default();
  options.insecure = true;
  options.port = (uint16_t)atoi(port);
  struct progress up = {0};
  UdtcCopySummary summary;
  CHECK(udtc_copy(file, "udt://127.0.0.1/", &options, on_progress, &up, &summary) == UDTC_OK,
        "upload a file to the daemon");
  CHECK(summary.files == 1 && summary.bytes > 0 && summary.transferred == summary.bytes,
        "the summary counts one file, all of it sent");
  CHECK(up.calls > 0 && up.done == summary.bytes && up.total == summary.bytes,
        "progress reached the total");
  CHECK(udtc_copy(file, "udt://127.0.0.1/", &options, NULL, NULL, NULL) == UDTC_ERR_EXISTS,
        "a second upload without force is UDTC_ERR_EXISTS");
  options.force = true;
  CHECK(udtc_copy(file, "udt://127.0.0.1/", &options, NULL, NULL, NULL) == UDTC_OK,
        "with force it replaces the file");

  snprintf(url, sizeof url, "udt://127.0.0.1:%s/%s", port, name);
  struct progress down = {0};
  CHECK(udtc_copy(url, dir, &options, on_progress, &down, &summary) == UDTC_OK,
        "download it back");
  CHECK(down.done == summary.bytes, "download progress reached the total");
  snprintf(back, sizeof back, "udt://127.0.0.1:%s/no-such-file", port);
  CHECK(udtc_copy(back, dir, &options, NULL, NULL, NULL) == UDTC_ERR_NOT_FOUND,
        "a missing remote file is UDTC_ERR_NOT_FOUND");
  CHECK(udtc_copy("a", "b", &options, NULL, NULL, NULL) == UDTC_ERR_USAGE,
        "two local paths are UDTC_ERR_USAGE");
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s DAEMON_PORT FILE DIR\n", argv[0]);
    return 2;
  }
  CHECK(udtc_version() != NULL && strlen(udtc_version()) > 0, "udtc_version");
  misuse_is_reported();
  stream_round_trip();
  copy_both_ways(argv[1], argv[2], argv[3]);
  printf("%d passed, 0 failed\n", checks);
  return 0;
}
