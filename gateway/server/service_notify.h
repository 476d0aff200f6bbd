#pragma once

namespace fencegate::gateway {

// Readiness for a service manager (systemd's Type=notify, sd_notify(3)); each a no-op when the
// process was not started by one (no NOTIFY_SOCKET), so callers need not ask.

// The listeners are bound and the store is open: systemd's start job completes, units ordered
// after fencegate.service start.
void NotifyReady();
// A reload began; NotifyReady() when it has been applied or refused (systemctl reload waits for
// that).
void NotifyReloading();
// The drain began: systemctl shows the unit as deactivating instead of failed-to-answer.
void NotifyStopping();

}  // namespace fencegate::gateway
