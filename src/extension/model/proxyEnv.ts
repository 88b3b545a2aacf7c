// VS Code's proxy settings as the environment the engine process honours (src/core/proxy.ts). The
// editor's own setting wins over a proxy inherited from its environment, in both spellings, because
// the engine reads the lower-case names first (as curl does).

export function editorProxyEnv(s: { proxy?: string; noProxy?: readonly string[] }): Record<string, string> {
  const env: Record<string, string> = {};
  const proxy = s.proxy?.trim();
  if (proxy) for (const name of ['https_proxy', 'http_proxy']) env[name] = env[name.toUpperCase()] = proxy;
  if (proxy && s.noProxy && s.noProxy.length > 0) env.no_proxy = env.NO_PROXY = s.noProxy.join(',');
  return env;
}
