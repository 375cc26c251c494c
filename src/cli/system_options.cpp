#include "cli/system_options.h"

#include "hw/architecture_json.h"
#include "hw/system_json.h"

namespace phaze::cli {

CLI::Option* add_system_options(CLI::App* cmd, SystemOptions& o, const std::string& when) {
  CLI::Option* arch =
      cmd->add_option("--arch", o.arch, "Architecture preset or JSON file" + when + " (default: the system's device)")
          ->capture_default_str();
  cmd->add_option("--system", o.system,
                  "System preset or JSON file" + when +
                      ": the network of tensor-parallel collectives (see 'phaze "
                      "system list')")
      ->capture_default_str();
  return arch;
}

hw::System resolve_system(const SystemOptions& o, bool arch_given) {
  hw::System system = hw::load_system(o.system);
  if (arch_given) system.device = hw::load_architecture(o.arch);
  return system;
}

}  // namespace phaze::cli
