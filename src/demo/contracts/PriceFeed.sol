// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// A Chainlink-style ETH/USD feed for the dev chain: 8 decimals, the aggregator's AnswerUpdated event and
/// latestRoundData(). Anyone may post an answer; this is demo data, not an oracle.
contract PriceFeed {
    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    uint8 public constant decimals = 8;
    string public constant description = "ETH / USD";
    uint80 public latestRound;
    mapping(uint80 => int256) public answers;
    mapping(uint80 => uint256) public updatedAts;

    function updateAnswer(int256 answer) external {
        uint80 round = latestRound + 1;
        latestRound = round;
        answers[round] = answer;
        updatedAts[round] = block.timestamp;
        emit AnswerUpdated(answer, round, block.timestamp);
    }

    function latestAnswer() external view returns (int256) {
        return answers[latestRound];
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        roundId = latestRound;
        answer = answers[roundId];
        startedAt = updatedAts[roundId];
        updatedAt = startedAt;
        answeredInRound = roundId;
    }
}
