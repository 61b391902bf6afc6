// The all-in-one package is a process, not a library: see main.ts (services) and setup.ts (migrations, topics).
export {};
