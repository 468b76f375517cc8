// kafkajs against an engine with the authorizer on: one command, one JSON line on stdout.
//   node acl_client.js BOOTSTRAP MECHANISM USER PASSWORD COMMAND ARGS...   (MECHANISM NONE: no SASL)
//   acls PRINCIPAL TOPIC          create, describe (with filters) and delete ACLs
//   produce TOPIC VALUE           {"ok": true} or {"error": "<Kafka's error name>"}
//   consume TOPIC GROUP           {"values": [...]} or {"error": ...}
//   transaction TOPIC TXN_ID      a transactional send and commit
//   describe-configs TOPIC        the config entries' synonyms, without and with includeSynonyms
// Used by tests/engine/protocol/test_acls.py, test_acl_denials.py and test_describe_configs_synonyms.py.
const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes,
        ConfigResourceTypes } = require('kafkajs')

const [bootstrap, mechanism, username, password, command, ...args] = process.argv.slice(2)
const kafka = new Kafka({
  brokers: bootstrap.split(','), clientId: 'acl-client', logLevel: logLevel.NOTHING,
  sasl: mechanism === 'NONE' ? undefined : { mechanism: mechanism.toLowerCase(), username, password },
  retry: { retries: 2, initialRetryTime: 100 },
})

const errorName = e => {
  for (let error = e; error; error = error.cause || error.originalError) {
    if (error.type) return error.type
  }
  return e.name || String(e)
}

async function acls (principal, topic) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    await admin.createAcls({ acl: [
      { resourceType: AclResourceTypes.TOPIC, resourceName: topic, resourcePatternType: ResourcePatternTypes.LITERAL,
        principal, host: '*', operation: AclOperationTypes.READ, permissionType: AclPermissionTypes.ALLOW },
      { resourceType: AclResourceTypes.TOPIC, resourceName: topic.slice(0, 3),
        resourcePatternType: ResourcePatternTypes.PREFIXED,
        principal, host: '*', operation: AclOperationTypes.WRITE, permissionType: AclPermissionTypes.DENY },
    ] })
    const filter = { resourceType: AclResourceTypes.TOPIC, resourceName: topic,
                     resourcePatternType: ResourcePatternTypes.MATCH, principal, host: '*',
                     operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY }
    const described = await admin.describeAcls(filter)
    const deleted = await admin.deleteAcls({ filters: [filter] })
    const after = await admin.describeAcls(filter)
    return { described: described.resources, deleted: deleted.filterResponses, after: after.resources }
  } finally {
    await admin.disconnect()
  }
}

async function produce (topic, value) {
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  try {
    await producer.send({ topic, acks: -1, messages: [{ value }] })
    return { ok: true }
  } finally {
    await producer.disconnect()
  }
}

async function consume (topic, group) {
  const consumer = kafka.consumer({ groupId: group, retry: { retries: 0 } })
  await consumer.connect()
  try {
    const crashed = new Promise(resolve => consumer.on(consumer.events.CRASH, e => resolve({ error: errorName(e.payload.error) })))
    await consumer.subscribe({ topic, fromBeginning: true })
    const values = []
    const received = new Promise(resolve => consumer.run({ eachMessage: async ({ message }) => {
      values.push(message.value.toString())
      resolve({ values })
    } }))
    const timeout = new Promise(resolve => setTimeout(() => resolve({ error: 'TIMEOUT' }), 30000))
    return await Promise.race([received, crashed, timeout])
  } finally {
    await consumer.disconnect()
  }
}

async function transaction (topic, transactionalId) {
  const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  try {
    const txn = await producer.transaction()
    await txn.send({ topic, messages: [{ value: 'in-a-transaction' }] })
    await txn.commit()
    return { ok: true }
  } finally {
    await producer.disconnect()
  }
}

async function describeConfigs (topic) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    const synonyms = async includeSynonyms => {
      const { resources } = await admin.describeConfigs({
        resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }], includeSynonyms })
      return resources[0].configEntries.reduce((n, entry) => n + entry.configSynonyms.length, 0)
    }
    return { unasked: await synonyms(undefined), refused: await synonyms(false), asked: await synonyms(true) }
  } finally {
    await admin.disconnect()
  }
}

const commands = { acls, produce, consume, transaction, 'describe-configs': describeConfigs }

commands[command](...args)
  .then(result => { console.log(JSON.stringify(result)); process.exit(0) })
  .catch(e => { console.log(JSON.stringify({ error: errorName(e) })); process.exit(0) })
