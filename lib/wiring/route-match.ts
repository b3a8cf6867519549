import { DEFAULT_ROUTE_PATH, type HttpRoute } from './types';

/** REST base path every declared route lives under (docs/contract.md §1). */
export const ROUTES_BASE_PATH = '/api/v1';

const segmentsOf = (path: string): string[] => path.split('/').filter(Boolean);

/** Whether a request path (as sent, under /api/v1) fits a declared path template (`{param}` = one segment). */
export const pathMatchesTemplate = (template: string, requestPath: string): boolean => {
  const expected = segmentsOf(`${ROUTES_BASE_PATH}${template}`);
  const actual = segmentsOf(requestPath);
  if (expected.length !== actual.length) return false;
  return expected.every((segment, index) => {
    const value = actual[index] ?? '';
    return /^\{\w+\}$/.test(segment) ? value !== '' : segment === value;
  });
};

/**
 * The methods the declaration serves on a request path, sorted; empty when no declared route has that path.
 * The catch-all route does not count: it serves no path of its own.
 */
export const allowedMethods = (routes: readonly HttpRoute[], requestPath: string): string[] =>
  [
    ...new Set(
      routes
        .filter((route) => route.path !== DEFAULT_ROUTE_PATH && pathMatchesTemplate(route.path, requestPath))
        .map((route) => route.method),
    ),
  ].sort();
