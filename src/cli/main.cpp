// phaze: co-search of accelerator architecture and distributed training plan for large language models.

#include "cli/run.h"

int main(int argc, char** argv) {
  return phaze::cli::run(argc, argv);
}
