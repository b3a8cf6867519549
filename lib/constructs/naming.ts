/** `notifications.create` / `$connect` / `fan-out` → `NotificationsCreate` / `Connect` / `FanOut`: construct ids. */
export const pascalCase = (id: string): string =>
  id
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== '')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
