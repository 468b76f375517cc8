// An exactly-once consume-transform-produce pipeline with kafkajs (producer.transaction(),
// sendOffsets) and a read_committed consumer. One transaction is aborted half-way; its batch
// is redone in a new transaction. Prints {"done": N, "aborted": M}.
// Usage: node eos_pipeline.js BROKERS INPUT OUTPUT GROUP TOTAL
const { Kafka, logLevel } = require('kafkajs')

const [brokers, input, output, groupId, totalArg] = process.argv.slice(2)
const total = Number(totalArg)

async function main () {
  const kafka = new Kafka({ clientId: 'kafkajs-eos', brokers: brokers.split(','), logLevel: logLevel.ERROR })
  const producer = kafka.producer({ transactionalId: 'kafkajs-eos', idempotent: true, maxInFlightRequests: 1 })
  const consumer = kafka.consumer({ groupId, readUncommitted: false, maxBytesPerPartition: 4 << 20 })
  await producer.connect()
  await consumer.connect()
  await consumer.subscribe({ topic: input, fromBeginning: true })
  let done = 0
  let aborted = 0
  let finish
  const finished = new Promise(resolve => { finish = resolve })
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset }) => {
      if (batch.messages.length === 0) return
      // The first attempt of one batch half-way is aborted; the batch is then redone, still in
      // memory, in a new transaction (a seek back would race kafkajs's prefetched batches).
      while (true) {
        const txn = await producer.transaction()
        try {
          await txn.send({ topic: output, messages: batch.messages.map(m => ({ key: m.key, value: m.value })) })
          const next = (BigInt(batch.lastOffset()) + 1n).toString()
          await txn.sendOffsets({
            consumerGroupId: groupId,
            topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }]
          })
          if (aborted === 0 && done >= total / 2) throw new Error('abort this transaction')
          await txn.commit()
          break
        } catch (error) {
          if (error.message !== 'abort this transaction') throw error
          await txn.abort()
          aborted += 1
        }
      }
      resolveOffset(batch.lastOffset())
      done += batch.messages.length
      if (done >= total) finish()
    }
  })
  await finished
  await consumer.disconnect()
  await producer.disconnect()
  console.log(JSON.stringify({ done, aborted }))
}

main().catch(error => { console.error(error); process.exit(1) })
