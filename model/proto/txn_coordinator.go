package proto

import "kafkasim/sim"

// What the transaction coordinator answers besides model/proto/txn.go.

// TransactionalIDNotFound is DescribeTransactions' answer for an id its
// coordinator does not hold (Errors.TRANSACTIONAL_ID_NOT_FOUND).
const TransactionalIDNotFound ErrorCode = 105

func init() { errorNames[TransactionalIDNotFound] = "TRANSACTIONAL_ID_NOT_FOUND" }

// NotCoordinator implements broker.CoordinatorRequest: every id
// NOT_COORDINATOR (a broker that hosts no transaction coordinator).
func (m *DescribeTransactionsRequest) NotCoordinator() sim.Message {
	r := &DescribeTransactionsResponse{CorrelationID: m.CorrelationID}
	for _, id := range m.TransactionalIDs {
		r.Transactions = append(r.Transactions, TransactionDescription{TransactionalID: id, Error: NotCoordinator,
			ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, StartTime: -1})
	}
	return r
}
