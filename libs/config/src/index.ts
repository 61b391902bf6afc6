export { ConfigError, loadConfig, optional, str, int, port, bool, oneOf, url, hostPorts, duration, base64Key } from './spec';
export type { ConfigOf, ConfigSpec, Env, VarReader } from './spec';
export { processConfig, servicePort, databaseConfig, redisConfig, kafkaConfig, busLimitsConfig } from './common';
