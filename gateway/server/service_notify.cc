#include "gateway/server/service_notify.h"

#include <systemd/sd-daemon.h>

#include <ctime>
#include <string>

namespace fencegate::gateway {
namespace {

// sd_notify's errors are not the gateway's: a service manager that went away does not stop it.
void Send(const std::string& state) { static_cast<void>(::sd_notify(0, state.c_str())); }

}  // namespace

void NotifyReady() { Send("READY=1"); }

void NotifyReloading() {
  // MONOTONIC_USEC lets the manager tell this reload from an earlier one (systemd >= 253 needs
  // it for Type=notify-reload; older versions ignore it).
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const long long usec = static_cast<long long>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
  Send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void NotifyStopping() { Send("STOPPING=1"); }

}  // namespace fencegate::gateway
