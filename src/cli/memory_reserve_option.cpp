#include "cli/memory_reserve_option.h"

#include <fmt/format.h>

#include <cmath>

#include "cli/option_values.h"

namespace phaze::cli {

CLI::Option* add_memory_reserve_option(CLI::App* cmd, int64_t& target) {
  const std::string name = "--memory-reserve-gib";
  CLI::Option* option = cmd->add_option_function<std::string>(
      name,
      [&target, name](const std::string& text) {
        const double gib = parse_number(name, text, 0, kMaxMemoryReserveGib);
        target = static_cast<int64_t>(std::llround(gib * static_cast<double>(int64_t{1} << 30)));
      },
      fmt::format("HBM each GPU keeps free beyond the modelled peak, GiB [0, {:g}]", kMaxMemoryReserveGib));
  option->default_str(fmt::format("{:g}", static_cast<double>(target) / static_cast<double>(int64_t{1} << 30)))
      ->type_name("GIB");
  return option;
}

}  // namespace phaze::cli
